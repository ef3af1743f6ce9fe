package httplock

import (
	"context"
	"errors"
	"net/http"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// New returns middleware that runs each request under the lock on its
// key, read by key, in b. A nil backend, a nil key or a bad option is an
// InvalidArgument *lock.Error that names it, and nothing reaches b.
func New(b lock.Backend, key KeyFunc, opts ...Option) (func(http.Handler) http.Handler, error) {
	var c config
	settings.Apply(&c, opts)
	c.S.HasKey = key != nil
	g, err := core.New(b, c.S)
	if err != nil {
		return nil, err
	}
	h := handler{g: g, key: key, config: c}
	if h.Busy == nil {
		h.Busy = guard.DefaultBusyHandler
	}
	if h.Error == nil {
		h.Error = guard.DefaultErrorHandler
	}
	return func(next http.Handler) http.Handler {
		h := h
		h.next = next
		return &h
	}, nil
}

// Must is like New but panics on a bad configuration.
func Must(b lock.Backend, key KeyFunc, opts ...Option) func(http.Handler) http.Handler {
	mw, err := New(b, key, opts...)
	if err != nil {
		panic(err)
	}
	return mw
}

type handler struct {
	g      *core.Guard
	key    KeyFunc
	next   http.Handler
	config // the options' functions (Scope, Fingerprint, Busy, Error, Skip)
}

// ServeHTTP locks the request's key around the next handler, or replays.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.Skip != nil && h.Skip(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	x := core.Exchange{W: w, R: r, Route: core.Route(r.Method, r.Pattern, r.URL.EscapedPath()),
		Key: func() (string, error) { return h.key(r) },
		Next: func(ctx context.Context, wrap core.Wrap) error {
			h.next.ServeHTTP(wrap(w), r.WithContext(ctx))
			return nil
		},
	}
	if h.Scope != nil {
		x.Scope = func() (string, error) { return h.Scope(r) }
	}
	if h.Fingerprint != nil {
		x.Fingerprint = func() (string, error) { return h.Fingerprint(r) }
	}
	out, err := h.g.Serve(x)
	switch {
	case out != core.Refused:
	case errors.Is(err, lock.ErrLocked):
		h.Busy(w, h.g.Refusal(r), h.g.RetryAfter(x.Route, err), err)
	default:
		h.Error(w, h.g.Refusal(r), err)
	}
}
