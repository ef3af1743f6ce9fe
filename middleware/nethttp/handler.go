package httplock

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// New returns middleware that runs each request under the lock on its key
// in b. It returns an error with lock.CodeInvalidArgument for a bad
// configuration: a nil backend, no key function, a TTL of 0 or under 3ms,
// a negative wait, or a prefix that is not valid UTF-8 or leaves no room
// for a key.
func New(b lock.Backend, opts ...Option) (func(http.Handler) http.Handler, error) {
	c := newConfig(opts)
	if c.keyFunc == nil {
		return nil, lock.InvalidArgument("config", "no key function; use WithKeyFunc")
	}
	if c.ttlSet && c.guard.TTL == 0 {
		return nil, lock.InvalidArgument("config", "TTL must be positive (leave WithTTL out for the default)")
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

// ServeHTTP locks the request's key around the next handler.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.c.skipper != nil && h.c.skipper(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	key, err := h.g.Key(h.c.keyFunc(r))
	if err != nil {
		h.c.onError(w, r, err)
		return
	}
	ran, err := h.g.Run(r.Context(), key, func(ctx context.Context) error {
		h.next.ServeHTTP(w, r.WithContext(ctx))
		return nil
	})
	switch {
	case ran:
	case errors.Is(err, lock.ErrLocked):
		h.c.busy(w, r, h.g.RetryAfter(err), err)
	default:
		h.c.onError(w, r, err)
	}
}

// DefaultBusyHandler answers 409 Conflict with a Retry-After header and an
// application/problem+json body.
func DefaultBusyHandler(w http.ResponseWriter, _ *http.Request, retryAfter time.Duration, _ error) {
	guard.WriteBusy(w, retryAfter)
}

// DefaultErrorHandler answers an application/problem+json body with 400 Bad
// Request for a missing or invalid key (lock.CodeInvalidArgument) and 503
// Service Unavailable otherwise. The body never contains the key.
func DefaultErrorHandler(w http.ResponseWriter, _ *http.Request, err error) {
	guard.WriteError(w, err)
}
