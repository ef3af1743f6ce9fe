package echolock

import (
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// KeyExtractor derives the lock key from a request. An error, or an empty
// key, is answered 400 (through Config.ErrorHandler) without calling the
// backend.
type KeyExtractor func(c echo.Context) (string, error)

// BusyHandler answers a request whose key is held by someone else, or,
// with Config.Limit, whose key's slots are all taken. Its error goes to
// Echo like a handler's (DefaultBusyHandler returns an *echo.HTTPError
// for the application's HTTPErrorHandler to render). retryAfter is a
// whole number of seconds, at least one: the time until the holder's
// lease expires (for a limit, the earliest expiry among the holders; the
// TTL when that is unknown), capped by the moving average of how long
// this route's handlers held the lock; err matches lock.ErrLocked, and
// ErrLimitReached when the limit is reached.
type BusyHandler func(c echo.Context, retryAfter time.Duration, err error) error

// ErrorHandler answers a request that could not be locked for a reason
// other than a busy key. Its error goes to Echo like a handler's
// (DefaultErrorHandler returns an *echo.HTTPError).
// lock.CodeOf(err) tells the cases apart: lock.CodeInvalidArgument for a
// missing or invalid key (no backend call was made), lock.CodeAborted when
// the request's context ended while waiting, and the backend's codes (such
// as lock.CodeServiceUnavailable) otherwise. With Config.Replay, err may
// also match ErrKeyReused, ErrRequestTooLarge, ErrRequestBody,
// ErrFingerprint or ErrBadRecord (lock.CodeOf is then "").
type ErrorHandler func(c echo.Context, err error) error

// Config configures the middleware. Zero fields take the values of
// DefaultConfig; Backend and one of KeyLookup or KeyExtractor are
// required.
type Config struct {
	// Skipper, when it returns true, sends the request to the handler
	// without a lock.
	Skipper middleware.Skipper
	// BeforeFunc runs just before the key is extracted (after Skipper).
	BeforeFunc middleware.BeforeFunc
	// Backend grants the leases (required).
	Backend lock.Backend
	// KeyLookup names where the lock key is read from, in the syntax of
	// Echo's own extractors: "<source>:<name>", with source one of header,
	// idempotency, param, query, form or cookie, such as
	// "idempotency:Idempotency-Key" or "param:id". The idempotency source
	// reads the named header as FromIdempotencyKey reads Idempotency-Key:
	// parsed as the IETF draft's structured-field string (a bare key is
	// accepted too), with several header lines or a malformed key answered
	// 400, so "idempotency:Idempotency-Key" is the lookup for replay mode,
	// while header reads the value as written. Several parts, separated by commas (spaces around them
	// are ignored), such as "param:tenant,header:Idempotency-Key", are
	// joined as Compose joins them, escaping each part, so distinct tuples
	// never share a key; a single part is used as is, the same key as its
	// From function gives. Every part must be present and non-empty, else
	// the request is answered 400. Echo's "header:<name>:<value prefix>"
	// form is not accepted. ToMiddleware rejects a malformed lookup, and a
	// Config that sets both KeyLookup and KeyExtractor.
	KeyLookup string
	// KeyExtractor reads the lock key from the request, for what KeyLookup
	// cannot say. See FromIdempotencyKey, FromParam, FromHeader, FromQuery,
	// FromForm, FromCookie and Compose.
	KeyExtractor KeyExtractor
	// Prefix is a namespace prepended verbatim to every key, such as
	// "orders:". It counts toward the 512-byte key limit.
	Prefix string
	// TTL is the lease duration (at least 3ms). Zero, like every zero
	// field here, takes DefaultConfig's value, DefaultTTL (30s); the
	// option-based packages, which can tell an option left out from a 0,
	// reject WithTTL(0) instead. The lease is kept alive while the handler
	// runs, so the TTL bounds how long a crashed instance blocks the key,
	// not how long a handler may take.
	TTL time.Duration
	// Wait is how long a request waits for a busy key (or a free slot,
	// with Limit) before it is answered 409 (429): lock.WithWait, with a default of 0 here (a single
	// attempt). While waiting, on a backend with a waiter queue
	// (redisbackend) the request is handed the key by the release, in the
	// order requests queued, and attempts again only as a fallback (at the
	// holder's expiry, or lockdriver.QueuedPollInterval after its last attempt);
	// on other backends it retries at most WaitMaxDelay apart. It stops
	// when the request's context ends.
	Wait time.Duration
	// FailOpen runs the handler without a lease (LeaseFrom reports false)
	// when the backend fails, instead of answering 503. Busy and invalid
	// keys are answered as usual. It cannot be combined with Replay
	// (ToMiddleware returns an error): a request let through without a
	// lease stores no response, so its retry would run the handler again.
	FailOpen bool
	// BusyHandler answers a busy key (default DefaultBusyHandler: an
	// *echo.HTTPError with 409; ProblemBusyHandler writes a problem+json
	// body instead).
	BusyHandler BusyHandler
	// ErrorHandler answers an invalid key or a backend failure (default
	// DefaultErrorHandler: an *echo.HTTPError with 400 or 503;
	// ProblemErrorHandler writes a problem+json body instead).
	ErrorHandler ErrorHandler
	// LockOptions are passed to lock.Do, such as
	// lock.WithReleaseErrorHandler or lock.WithHeartbeat. The
	// middleware's own settings win over them: TTL and Wait (and its
	// retry schedule) are set by those fields only, so lock.WithTTL,
	// lock.WithWait or lock.WithRetry given here are overridden, and a
	// limit by Limit, not lock.WithLimit (see Limit).
	LockOptions []lock.Option
	// RouteScope says whether lock keys include the request's route, the
	// method and the route path (c.Path(), such as "POST /orders/:id"),
	// after Prefix; when no route matched, the escaped request path stands
	// in. RouteScopeDefault includes it for locks and replay, so the key
	// "42" on two routes is two locks, and leaves it out for limits, which
	// count what their key names on every route. With the route left out,
	// every route under Prefix shares one key space, and with Replay a key
	// reused on another route is answered 422.
	RouteScope RouteScope
	// Scope returns the request's scope, the authenticated principal (user
	// id, tenant id, API key id) its keys belong to, as the authentication
	// middleware in front established it (a value it set on the context),
	// never a header the client chooses. It goes into every lock key (and
	// so every replay record's key), escaped as a Compose part: two
	// principals that send one key never share a lock or a stored
	// response. An error, or "", is answered 401 (ErrScope). Replay needs
	// Scope or Unscoped.
	Scope func(c echo.Context) (string, error)
	// Unscoped says that Replay runs without a Scope: every client that
	// sends a key is served the response stored for it. For public
	// endpoints only. ToMiddleware rejects Replay with neither, and
	// Unscoped with Scope.
	Unscoped bool
	// ProblemTypeBase, when set, is the base URI of the problem types of
	// ProblemBusyHandler's and ProblemErrorHandler's answers, such as
	// "https://example.com/problems/": each type is then the base followed
	// by its name ("lock-busy", ...) instead of a URN
	// (urn:syncguard:problem:lock-busy). It must be an absolute http(s)
	// URI.
	ProblemTypeBase string
	// Replay, when not nil, turns on replay mode for idempotent requests
	// (see ReplayConfig): &echolock.ReplayConfig{} for the defaults.
	Replay *ReplayConfig
	// Limit, when not 0, makes the key a concurrency limit instead of a
	// lock: at most Limit requests with one key run the handler at once,
	// across every instance sharing the backend, each under a slot of its
	// own (an ordinary lease, with its own fence; see lock.WithLimit). A
	// request that finds every slot taken, after Wait, gets the
	// BusyHandler with an error matching ErrLimitReached: by default an
	// *echo.HTTPError with 429 Too Many Requests, Retry-After set on the
	// response. For "at most 3 exports per user", key the requests by
	// user: the principal from the authentication middleware, in a
	// KeyExtractor (or in Scope, with a KeyExtractor naming what is
	// limited), and set Limit: 3. The route is left out of a limit's key
	// by default (RouteScope), so one limit holds across every route that
	// uses this middleware.
	//
	// Limit must be between 0 and lockdriver.MaxLimit; with a limit, Backend
	// must be a lock.IDBackend (redisbackend.Backend is, and otellock.Wrap
	// of one keeps it) and Replay must be nil: replay stores one response
	// per key for requests that must run once, while a limit lets several
	// run at once. ToMiddleware returns an error otherwise. Each key is either
	// a lock or a limit: a key locked elsewhere as a plain lock is
	// answered 500 (lock.ErrKindMismatch) until that lock ends. Set Limit
	// rather than lock.WithLimit in LockOptions, which would give 409
	// answers.
	Limit int
}

// RouteScope says whether lock keys include the request's route
// (Config.RouteScope).
type RouteScope int

const (
	// RouteScopeDefault includes the route for locks and replay, and
	// leaves it out for limits.
	RouteScopeDefault RouteScope = iota
	// RouteScopeOn includes the route.
	RouteScopeOn
	// RouteScopeOff leaves the route out.
	RouteScopeOff
)

// Defaults.
const (
	// DefaultTTL is the lease duration when Config.TTL is zero.
	DefaultTTL = guard.DefaultTTL
	// WaitMaxDelay is the longest pause between attempts while waiting for
	// a busy key (see Config.Wait).
	WaitMaxDelay = guard.WaitMaxDelay
)

// DefaultConfig is the default configuration. It has no Backend, no
// KeyLookup and no KeyExtractor: those are always the caller's.
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
// with lock.CodeInvalidArgument for a nil Backend, neither or both of
// KeyLookup and KeyExtractor, a malformed KeyLookup, a TTL that is
// negative or under 3ms, a negative Wait, a bad lock option, a Prefix
// that is not valid UTF-8 or leaves no room for a key; with Replay, a
// Backend that is not a lock.Recorder, a replay TTL under 1ms, a negative
// limit or a header that cannot be replayed; a Limit outside 0 to
// lockdriver.MaxLimit; with a Limit, a Backend that is not a lock.IDBackend (the
// error then also matches errors.ErrUnsupported) or Replay set.
func (c Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	switch {
	case c.KeyLookup != "" && c.KeyExtractor != nil:
		return nil, lockdriver.InvalidArgument("config", "echolock: KeyLookup and KeyExtractor are both set; set one")
	case c.KeyLookup != "":
		key, err := parseKeyLookup(c.KeyLookup)
		if err != nil {
			return nil, err
		}
		c.KeyExtractor = key
	case c.KeyExtractor == nil:
		return nil, lockdriver.InvalidArgument("config", "echolock: no key: set KeyLookup (such as \"idempotency:Idempotency-Key\") or KeyExtractor")
	}
	if c.RouteScope < RouteScopeDefault || c.RouteScope > RouteScopeOff {
		return nil, lockdriver.InvalidArgument("config", "echolock: unknown RouteScope")
	}
	if c.ProblemTypeBase != "" {
		if err := guard.ValidProblemBase(c.ProblemTypeBase); err != nil {
			return nil, err
		}
	}
	g, err := guard.New(c.Backend, guard.Config{
		Prefix:      c.Prefix,
		TTL:         c.TTL,
		Wait:        c.Wait,
		FailOpen:    c.FailOpen,
		LockOptions: c.LockOptions,
		NoRoute:     c.RouteScope == RouteScopeOff || (c.RouteScope == RouteScopeDefault && c.Limit != 0),
		Scoped:      c.Scope != nil,
		Unscoped:    c.Unscoped,
		Replay:      c.Replay.guard(),
		Limit:       c.Limit,
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
