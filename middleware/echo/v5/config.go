package echolock

import (
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
)

// KeyExtractor reads the lock key from a request. An error, or "", is
// answered 400 without calling the backend.
type KeyExtractor func(c *echo.Context) (string, error)

// BusyHandler answers a busy key; its error goes to Echo like a
// handler's. retryAfter is whole seconds; err matches lock.ErrLocked.
type BusyHandler func(c *echo.Context, retryAfter time.Duration, err error) error

// ErrorHandler answers a request refused for another reason: a bad key,
// a replay error (httpguard's errors), a failing backend.
type ErrorHandler func(c *echo.Context, err error) error

// Config configures the middleware; zero fields take DefaultConfig's
// values. Backend and KeyLookup or KeyExtractor are required.
type Config struct {
	// Skipper sends the requests it accepts on without a lock.
	Skipper middleware.Skipper
	// Backend grants the leases.
	Backend lock.Backend
	// KeyLookup says where the key is, in Echo's extractor syntax:
	// "param:tenant,idempotency:Idempotency-Key".
	KeyLookup string
	// KeyExtractor reads the key, for what KeyLookup cannot say.
	KeyExtractor KeyExtractor
	// Scope returns the authenticated principal the keys belong to.
	// Replay needs Scope or Unscoped.
	Scope func(c *echo.Context) (string, error)
	// Unscoped runs Replay without a Scope, for public endpoints.
	Unscoped bool
	// Prefix is prepended verbatim to every key.
	Prefix string
	// RouteScope says whether keys include the route.
	RouteScope RouteScope
	// TTL is the lease duration (default httpguard.DefaultTTL).
	TTL time.Duration
	// Wait is how long a request waits for a busy key (default 0).
	Wait time.Duration
	// Limit, when not 0, makes the key a limit of Limit slots.
	Limit int
	// Replay, when not nil, turns replay mode on.
	Replay *ReplayConfig
	// FailOpen runs the handler without a lease when the backend fails.
	FailOpen bool
	// LockOptions are passed to lock.Do; TTL, Wait and Limit win.
	LockOptions []lock.Option
	// BeforeFunc runs after Skipper, before the key is read.
	BeforeFunc middleware.BeforeFunc
	// BusyHandler answers a busy key (default DefaultBusyHandler).
	BusyHandler BusyHandler
	// ErrorHandler answers other refusals (default DefaultErrorHandler).
	ErrorHandler ErrorHandler
	// ProblemTypeBase is the base URI of the answers' problem types.
	ProblemTypeBase string
}

// RouteScope says whether lock keys include the route: the method and
// c.Path(), such as "POST /orders/:id".
type RouteScope int

// The route scopes. The default includes the route for locks and
// replay, not for limits.
const (
	RouteScopeDefault RouteScope = iota
	RouteScopeOn
	RouteScopeOff
)

// ReplayConfig configures replay mode (Config.Replay). Zero fields take
// httpguard's defaults.
type ReplayConfig struct {
	// TTL is how long a response is replayed.
	TTL time.Duration
	// Headers are the response headers stored; nil: the defaults.
	Headers []string
	// MaxBody is the largest response body stored.
	MaxBody int64
	// MaxRequestBody is the largest request body accepted.
	MaxRequestBody int64
	// Statuses decides which statuses are stored.
	Statuses func(status int) bool
	// Fingerprint adds its result to the request fingerprint.
	Fingerprint func(c *echo.Context) (string, error)
}

// DefaultConfig is the default configuration; Backend and the key are
// always the caller's.
var DefaultConfig = Config{
	Skipper:      middleware.DefaultSkipper,
	TTL:          httpguard.DefaultTTL,
	BusyHandler:  DefaultBusyHandler,
	ErrorHandler: DefaultErrorHandler,
}

// New returns the middleware with DefaultConfig, backend b and key
// extractor key. It panics on a bad configuration.
func New(b lock.Backend, key KeyExtractor) echo.MiddlewareFunc {
	c := DefaultConfig
	c.Backend, c.KeyExtractor = b, key
	return NewWithConfig(c)
}

// NewWithConfig returns the middleware for c. It panics on a bad
// configuration; Config.ToMiddleware returns the error instead.
func NewWithConfig(c Config) echo.MiddlewareFunc {
	mw, err := c.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
}
