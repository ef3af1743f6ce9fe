package httplock

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// New returns middleware that runs each request under the lock on its key
// in b. It returns an error with lock.CodeInvalidArgument for a bad
// configuration: a nil backend, no key function, a TTL of 0 or under 3ms,
// a negative wait, a prefix that is not valid UTF-8 or leaves no room for
// a key; with WithReplay, a backend that is not a lock.Recorder, a replay
// TTL of 0 or under 1ms, a negative limit or a header that cannot be
// replayed; a replay option without WithReplay; with WithLimit, a limit
// outside 1 to lockdriver.MaxLimit, a backend that is not a lock.IDBackend (the
// error then also matches errors.ErrUnsupported), or WithReplay as well.
func New(b lock.Backend, opts ...Option) (func(http.Handler) http.Handler, error) {
	c := newConfig(opts)
	if c.keyFunc == nil {
		return nil, lockdriver.InvalidArgument("config", "no key function; use WithKeyFunc")
	}
	if c.ttlSet && c.guard.TTL == 0 {
		return nil, lockdriver.InvalidArgument("config", "TTL must be positive (leave WithTTL out for the default)")
	}
	switch {
	case c.replayOn && c.replay.TTL == 0:
		return nil, lockdriver.InvalidArgument("config", "replay TTL must be positive (httplock.DefaultReplayTTL is 24h)")
	case !c.replayOn && c.replayTuned != "":
		return nil, lockdriver.InvalidArgument("config", c.replayTuned+" needs WithReplay")
	case c.limitSet && c.guard.Limit == 0:
		return nil, lockdriver.InvalidArgument("config", "limit must be between 1 and "+strconv.Itoa(lockdriver.MaxLimit)+" (leave WithLimit out for no limit)")
	case c.replayOn:
		c.guard.Replay = &c.replay
	}
	if c.problemBase != "" {
		if err := guard.ValidProblemBase(c.problemBase); err != nil {
			return nil, err
		}
	}
	c.guard.Scoped = c.scope != nil
	c.guard.NoRoute = c.guard.Limit != 0 // a limit counts what its key names, on every route
	if c.routeScope != nil {
		c.guard.NoRoute = !*c.routeScope
	}
	g, err := guard.New(b, c.guard)
	if err != nil {
		return nil, err
	}
	if c.busy == nil {
		c.busy = DefaultBusyHandler
	}
	if c.onError == nil {
		c.onError = DefaultErrorHandler
	}
	return func(next http.Handler) http.Handler {
		return &handler{g: g, c: c, next: next}
	}, nil
}

// Must is like New but panics on a bad configuration.
func Must(b lock.Backend, opts ...Option) func(http.Handler) http.Handler {
	mw, err := New(b, opts...)
	if err != nil {
		panic(err)
	}
	return mw
}

type handler struct {
	g    *guard.Guard
	c    config
	next http.Handler
}

// ServeHTTP locks the request's key around the next handler, or replays.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.c.skipper != nil && h.c.skipper(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	x := guard.Exchange{
		W:     w,
		R:     r,
		Route: route(r),
		Key:   func() (string, error) { return h.c.keyFunc(r) },
		Next: func(ctx context.Context, wrap func(http.ResponseWriter) http.ResponseWriter) error {
			h.next.ServeHTTP(wrap(w), r.WithContext(ctx))
			return nil
		},
	}
	if h.c.scope != nil {
		x.Scope = func() (string, error) { return h.c.scope(r) }
	}
	if h.c.fingerprint != nil {
		x.Fingerprint = func() (string, error) { return h.c.fingerprint(r) }
	}
	out, err := h.g.Serve(x)
	if out == guard.Refused && h.c.problemBase != "" {
		r = r.WithContext(guard.WithProblemBase(r.Context(), h.c.problemBase))
	}
	switch {
	case out != guard.Refused:
	case errors.Is(err, lock.ErrLocked):
		h.c.busy(w, r, h.g.RetryAfter(x.Route, err), err)
	default:
		h.c.onError(w, r, err)
	}
}

// DefaultBusyHandler answers 409 Conflict (429 Too Many Requests when err
// matches ErrLimitReached) with a Retry-After header and an
// application/problem+json body (of type
// urn:syncguard:problem:lock-busy, or
// urn:syncguard:problem:concurrency-limit-reached for 429).
func DefaultBusyHandler(w http.ResponseWriter, r *http.Request, retryAfter time.Duration, err error) {
	guard.WriteBusy(r.Context(), w, retryAfter, err)
}

// DefaultErrorHandler answers an application/problem+json body with 400 Bad
// Request for a missing or invalid key (lock.CodeInvalidArgument), 401
// Unauthorized for a request without a scope (ErrScope), 413 Content Too
// Large for a body over a limit (ErrRequestTooLarge, or an
// http.MaxBytesError from anywhere), 500 Internal Server Error for a limit
// the backend cannot keep (an error matching errors.ErrUnsupported or
// lock.ErrKindMismatch), the statuses of the replay errors (422
// ErrKeyReused, 409 ErrNotReplayable, 400 ErrRequestBody and
// ErrFingerprint, 500 ErrBadRecord), and 503 Service Unavailable
// otherwise. The body never contains the key. Its problem type is a URN,
// or under WithProblemTypeBase's URI.
func DefaultErrorHandler(w http.ResponseWriter, r *http.Request, err error) {
	guard.WriteError(r.Context(), w, err)
}
