package echolock

import (
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
	"github.com/syncguard-go/syncguard/middleware/internal/echocore"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// KeyExtractor reads the lock key from a request; an error or "" is
// answered 400.
type KeyExtractor func(c *echo.Context) (string, error)

// BusyHandler answers a busy key; err matches lock.ErrLocked.
type BusyHandler func(c *echo.Context, retryAfter time.Duration, err error) error

// ErrorHandler answers a request refused for another reason.
type ErrorHandler func(c *echo.Context, err error) error

// Config configures the middleware; docs/http.md describes every field.
// Zero fields take DefaultConfig's values.
type Config struct {
	// Skipper lets the requests it accepts through without a lock.
	Skipper middleware.Skipper
	// BeforeFunc runs before the key is read.
	BeforeFunc middleware.BeforeFunc
	// Backend grants the leases.
	Backend lock.Backend
	// KeyLookup says where the key is, as "param:id".
	KeyLookup string
	// KeyExtractor reads the key.
	KeyExtractor KeyExtractor
	// Prefix is prepended to every key.
	Prefix string
	// Scope returns the principal the keys belong to.
	Scope func(c *echo.Context) (string, error)
	// Unscoped allows Replay without a Scope.
	Unscoped bool
	// RouteScope says whether keys include the route.
	RouteScope RouteScope
	// TTL is the lease duration.
	TTL time.Duration
	// Wait is how long to wait for a busy key.
	Wait time.Duration
	// BackendTimeout bounds each call to the backend (zero:
	// guard.DefaultBackendTimeout); an unanswered call is a 503.
	BackendTimeout time.Duration
	// Limit, when set, makes the key a limit of Limit slots.
	Limit int
	// Replay, when set, turns replay mode on.
	Replay *ReplayConfig
	// FailOpen serves without a lease when the backend fails.
	FailOpen bool
	// LockOptions are passed to lock.Do.
	LockOptions []lock.Option
	// BusyHandler answers a busy key.
	BusyHandler BusyHandler
	// ErrorHandler answers other refusals.
	ErrorHandler ErrorHandler
	// ProblemTypeBase is the base URI of problem types.
	ProblemTypeBase string
}

// RouteScope says whether lock keys include the route (guard's).
type RouteScope = guard.RouteScope

// The route scopes: RouteScopeDefault includes the route except for
// limits, RouteScopeOn always, RouteScopeOff never.
const (
	RouteScopeDefault = guard.RouteScopeDefault
	RouteScopeOn      = guard.RouteScopeOn
	RouteScopeOff     = guard.RouteScopeOff
)

// ReplayConfig configures replay mode; zero fields take the defaults.
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

// DefaultConfig is the default configuration.
var DefaultConfig = Config{
	Skipper:      middleware.DefaultSkipper,
	TTL:          guard.DefaultTTL,
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

// NewWithConfig returns the middleware for c; it panics on a bad
// configuration.
func NewWithConfig(c Config) echo.MiddlewareFunc {
	mw, err := c.ToMiddleware()
	if err != nil {
		panic(err)
	}
	return mw
}

// ToMiddleware checks c and returns the middleware, or an
// InvalidArgument *lock.Error naming the bad field.
func (c Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	key, err := keys.Extractor(c.KeyLookup, c.KeyExtractor)
	if err != nil {
		return nil, err
	}
	h := echocore.Hooks[*echo.Context]{Skipper: c.Skipper, Before: c.BeforeFunc, Key: key, Scope: c.Scope,
		Busy: DefaultBusyHandler, Error: DefaultErrorHandler}
	s := settings.Settings{Fields: true, HasKey: key != nil, HasScope: c.Scope != nil,
		Prefix: c.Prefix, RouteScope: settings.RouteScope(c.RouteScope), TTL: c.TTL, Wait: c.Wait, BackendTimeout: c.BackendTimeout, Limit: c.Limit,
		FailOpen: c.FailOpen, LockOptions: c.LockOptions, Unscoped: c.Unscoped, ProblemBase: c.ProblemTypeBase}
	if r := c.Replay; r != nil {
		s.ReplayOn, h.Fingerprint = true, r.Fingerprint
		s.Replay = settings.Replay{TTL: r.TTL, Headers: r.Headers, MaxBody: r.MaxBody, MaxRequestBody: r.MaxRequestBody, Statuses: r.Statuses}
	}
	if c.BusyHandler != nil {
		h.Busy = c.BusyHandler
	}
	if c.ErrorHandler != nil {
		h.Error = c.ErrorHandler
	}
	g, err := core.New(c.Backend, s)
	if err != nil {
		return nil, err
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error { return frame.Serve(g, &h, c, next) }
	}, nil
}
