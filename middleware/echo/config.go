package echolock

import (
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// KeyExtractor derives the lock key from a request. An error, or an empty
// key, makes the middleware answer 400 without calling the backend.
type KeyExtractor func(c echo.Context) (string, error)

// BusyHandler answers a request whose key is held by someone else. Its
// error goes to Echo like a handler's. retryAfter is the whole number of
// seconds (at least one) until the holder's lease expires, or the TTL when
// that is unknown; err matches lock.ErrLocked.
type BusyHandler func(c echo.Context, retryAfter time.Duration, err error) error

// ErrorHandler answers a request that could not be locked for a reason
// other than a busy key. Its error goes to Echo like a handler's.
// lock.CodeOf(err) tells the cases apart: lock.CodeInvalidArgument for a
// missing or invalid key (no backend call was made), lock.CodeAborted when
// the request's context ended while waiting, and the backend's codes (such
// as lock.CodeServiceUnavailable) otherwise.
type ErrorHandler func(c echo.Context, err error) error

// Config configures the middleware. Zero fields take the values of
// DefaultConfig; Backend and KeyExtractor are required.
type Config struct {
	// Skipper, when it returns true, sends the request to the handler
	// without a lock.
	Skipper middleware.Skipper
	// BeforeFunc runs just before the key is extracted (after Skipper).
	BeforeFunc middleware.BeforeFunc
	// Backend grants the leases (required).
	Backend lock.Backend
	// KeyExtractor reads the lock key from the request (required). See
	// FromParam, FromHeader, FromQuery and Compose.
	KeyExtractor KeyExtractor
	// Prefix is a namespace prepended verbatim to every key, such as
	// "orders:". It counts toward the 512-byte key limit.
	Prefix string
	// TTL is the lease duration (default 30s). The lease is kept alive
	// while the handler runs, so the TTL bounds how long a crashed instance
	// blocks the key, not how long a handler may take.
	TTL time.Duration
	// Wait is how long a request waits for a busy key before it is
	// answered 409 (default 0: a single attempt). While waiting it retries
	// at most WaitMaxDelay apart, and it stops when the request's context
	// ends.
	Wait time.Duration
	// FailOpen runs the handler without a lease (LeaseFrom reports false)
	// when the backend fails, instead of answering 503. Busy and invalid
	// keys are answered as usual.
	FailOpen bool
	// BusyHandler answers a busy key (default DefaultBusyHandler).
	BusyHandler BusyHandler
	// ErrorHandler answers an invalid key or a backend failure (default
	// DefaultErrorHandler).
	ErrorHandler ErrorHandler
	// LockOptions are passed to lock.Do after the middleware's own (so
	// they win): for example lock.OnReleaseError or lock.WithKeepOptions.
	LockOptions []lock.Option
}

// Defaults.
const (
	// DefaultTTL is the lease duration when Config.TTL is zero.
	DefaultTTL = guard.DefaultTTL
	// WaitMaxDelay is the longest pause between attempts while waiting for
	// a busy key (see Config.Wait).
	WaitMaxDelay = guard.WaitMaxDelay
)

// DefaultConfig is the default configuration. It has no Backend and no
// KeyExtractor: those are always the caller's.
var DefaultConfig = Config{
	Skipper:      middleware.DefaultSkipper,
	TTL:          DefaultTTL,
	BusyHandler:  DefaultBusyHandler,
	ErrorHandler: DefaultErrorHandler,
}

// New returns the middleware with DefaultConfig, backend b and key
// extractor key. It panics on a bad configuration, as Echo's middleware
// constructors do; use Config.ToMiddleware to get the error instead.
func New(b lock.Backend, key KeyExtractor) echo.MiddlewareFunc {
	c := DefaultConfig
	c.Backend = b
	c.KeyExtractor = key
	return NewWithConfig(c)
}

// NewWithConfig returns the middleware for c. It panics on a bad
// configuration; use Config.ToMiddleware to get the error instead.
func NewWithConfig(c Config) echo.MiddlewareFunc {
	mw, err := c.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
}

// ToMiddleware validates c and returns the middleware. It returns an error
// with lock.CodeInvalidArgument for a nil Backend or KeyExtractor, a
// negative TTL or Wait, or a Prefix that is not valid UTF-8 or leaves no
// room for a key.
func (c Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	if c.KeyExtractor == nil {
		return nil, lock.InvalidArgument("config", "echolock: nil KeyExtractor")
	}
	g, err := guard.New(c.Backend, guard.Config{
		Prefix:      c.Prefix,
		TTL:         c.TTL,
		Wait:        c.Wait,
		FailOpen:    c.FailOpen,
		LockOptions: c.LockOptions,
	})
	if err != nil {
		return nil, err
	}
	if c.Skipper == nil {
		c.Skipper = DefaultConfig.Skipper
	}
	if c.BusyHandler == nil {
		c.BusyHandler = DefaultBusyHandler
	}
	if c.ErrorHandler == nil {
		c.ErrorHandler = DefaultErrorHandler
	}
	return c.middleware(g), nil
}
