package echolock

import (
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
	"github.com/syncguard-go/syncguard/middleware/internal/echocore"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// KeyExtractor reads the lock key from a request. An error, or "", is
// answered 400 without calling the backend.
type KeyExtractor func(c echo.Context) (string, error)

// BusyHandler answers a busy key; its error goes to Echo like a
// handler's. retryAfter is whole seconds; err matches lock.ErrLocked.
type BusyHandler func(c echo.Context, retryAfter time.Duration, err error) error

// ErrorHandler answers a request refused for another reason: a bad key,
// a replay error (httpguard's errors), a failing backend.
type ErrorHandler func(c echo.Context, err error) error

// Config configures the middleware. Zero fields take DefaultConfig's
// values; Backend and one of KeyLookup or KeyExtractor are required.
// docs/http.md describes every field.
type Config struct {
	// Skipper sends the requests it accepts to the handler without a lock.
	Skipper middleware.Skipper
	// BeforeFunc runs after Skipper, before the key is read.
	BeforeFunc middleware.BeforeFunc
	// Backend grants the leases.
	Backend lock.Backend
	// KeyLookup says where the key is, in Echo's extractor syntax, such
	// as "param:tenant,idempotency:Idempotency-Key".
	KeyLookup string
	// KeyExtractor reads the key, for what KeyLookup cannot say.
	KeyExtractor KeyExtractor
	// Prefix is prepended verbatim to every key.
	Prefix string
	// TTL is the lease duration (default httpguard.DefaultTTL).
	TTL time.Duration
	// Wait is how long a request waits for a busy key (default 0).
	Wait time.Duration
	// FailOpen runs the handler without a lease when the backend fails.
	FailOpen bool
	// BusyHandler answers a busy key (default DefaultBusyHandler).
	BusyHandler BusyHandler
	// ErrorHandler answers other refusals (default DefaultErrorHandler).
	ErrorHandler ErrorHandler
	// LockOptions are passed to lock.Do; TTL, Wait and Limit win.
	LockOptions []lock.Option
	// RouteScope says whether keys include the route.
	RouteScope RouteScope
	// Scope returns the authenticated principal the request's keys
	// belong to. Replay needs Scope or Unscoped.
	Scope func(c echo.Context) (string, error)
	// Unscoped runs Replay without a Scope, for public endpoints.
	Unscoped bool
	// ProblemTypeBase is the base URI of the problem types of
	// ProblemBusyHandler's and ProblemErrorHandler's answers.
	ProblemTypeBase string
	// Replay, when not nil, turns replay mode on.
	Replay *ReplayConfig
	// Limit, when not 0, makes the key a concurrency limit of Limit slots.
	Limit int
}

// RouteScope says whether lock keys include the route: the method and
// c.Path(), such as "POST /orders/:id".
type RouteScope int

const (
	// RouteScopeDefault includes the route for locks and replay, not for
	// limits.
	RouteScopeDefault RouteScope = iota
	// RouteScopeOn includes the route.
	RouteScopeOn
	// RouteScopeOff leaves the route out.
	RouteScopeOff
)

// ReplayConfig configures replay mode (Config.Replay). Zero fields take
// httpguard's defaults.
type ReplayConfig struct {
	// TTL is how long a response is replayed.
	TTL time.Duration
	// Headers are the response headers stored and replayed; nil means
	// httpguard.DefaultReplayHeaders().
	Headers []string
	// MaxBody is the largest response body stored.
	MaxBody int64
	// MaxRequestBody is the largest request body accepted.
	MaxRequestBody int64
	// Fingerprint adds its result to the request fingerprint.
	Fingerprint func(c echo.Context) (string, error)
	// Statuses decides which statuses are stored.
	Statuses func(status int) bool
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
	c.Backend = b
	c.KeyExtractor = key
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

// ToMiddleware checks c and returns the middleware. A bad configuration
// is an InvalidArgument *lock.Error that names the field.
func (c Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	key, err := keys.Extractor(c.KeyLookup, c.KeyExtractor)
	if err != nil {
		return nil, err
	}
	s := settings.Settings{Fields: true, Prefix: c.Prefix, TTL: c.TTL, Wait: c.Wait, FailOpen: c.FailOpen,
		LockOptions: c.LockOptions, RouteScope: settings.RouteScope(c.RouteScope), Unscoped: c.Unscoped,
		ProblemBase: c.ProblemTypeBase, Limit: c.Limit, Key: settings.Of(key), Scope: settings.Of(c.Scope)}
	if r := c.Replay; r != nil {
		s.ReplayOn = true
		s.Replay = settings.Replay{TTL: r.TTL, Headers: r.Headers, MaxBody: r.MaxBody, MaxRequestBody: r.MaxRequestBody, Statuses: r.Statuses}
		s.Fingerprint = settings.Of(r.Fingerprint)
	}
	g, err := guard.New(c.Backend, s)
	if err != nil {
		return nil, err
	}
	h := echocore.Hooks[echo.Context]{Skipper: c.Skipper, Before: c.BeforeFunc, Key: key, Scope: c.Scope,
		Busy: c.BusyHandler, Error: c.ErrorHandler}
	if c.Replay != nil {
		h.Fingerprint = c.Replay.Fingerprint
	}
	if h.Busy == nil {
		h.Busy = DefaultBusyHandler
	}
	if h.Error == nil {
		h.Error = DefaultErrorHandler
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return frame.Serve(g, &h, c, next) }
	}, nil
}
