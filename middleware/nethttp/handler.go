package httplock

import (
	"cmp"
	"context"
	"errors"
	"net/http"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// New returns middleware that runs each request under the lock on its
// key in b. opts are this package's and httpguard's options; WithKeyFunc
// is required. A bad configuration is an InvalidArgument *lock.Error
// that names the option, and nothing reaches b.
func New(b lock.Backend, opts ...Option) (func(http.Handler) http.Handler, error) {
	var s settings.Settings
	for _, o := range opts {
		if o != nil {
			o(&s)
		}
	}
	g, err := guard.New(b, s)
	if err != nil {
		return nil, err
	}
	h := handler{g: g, busy: httpguard.DefaultBusyHandler, onError: httpguard.DefaultErrorHandler}
	if err := hooks(&s, &h); err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		h := h
		h.next = next
		return &h
	}, nil
}

// hooks reads the net/http functions of s into h.
func hooks(s *settings.Settings, h *handler) error {
	var errs [6]error
	h.key, errs[0] = settings.Hook[KeyFunc](s, "Key", s.Key)
	h.scope, errs[1] = settings.Hook[ScopeFunc](s, "Scope", s.Scope)
	h.fingerprint, errs[2] = settings.Hook[FingerprintFunc](s, "Fingerprint", s.Fingerprint)
	h.skip, errs[3] = settings.Hook[func(*http.Request) bool](s, "Skipper", s.Skip)
	if s.Busy != nil {
		h.busy, errs[4] = settings.Hook[BusyHandler](s, "BusyHandler", s.Busy)
	}
	if s.Error != nil {
		h.onError, errs[5] = settings.Hook[ErrorHandler](s, "ErrorHandler", s.Error)
	}
	return cmp.Or(errs[:]...)
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
	g           *guard.Guard
	key         KeyFunc
	scope       ScopeFunc
	fingerprint FingerprintFunc
	busy        httpguard.BusyHandler
	onError     httpguard.ErrorHandler
	skip        func(*http.Request) bool
	next        http.Handler
}

// ServeHTTP locks the request's key around the next handler, or replays.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.skip != nil && h.skip(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	x := guard.Exchange{W: w, R: r, Route: guard.Route(r.Method, r.Pattern, r.URL.EscapedPath()),
		Key: func() (string, error) { return h.key(r) },
		Next: func(ctx context.Context, wrap guard.Wrap) error {
			h.next.ServeHTTP(wrap(w), r.WithContext(ctx))
			return nil
		},
	}
	if h.scope != nil {
		x.Scope = func() (string, error) { return h.scope(r) }
	}
	if h.fingerprint != nil {
		x.Fingerprint = func() (string, error) { return h.fingerprint(r) }
	}
	out, err := h.g.Serve(x)
	switch {
	case out != guard.Refused:
	case errors.Is(err, lock.ErrLocked):
		h.busy(w, h.g.Refusal(r), h.g.RetryAfter(x.Route, err), err)
	default:
		h.onError(w, h.g.Refusal(r), err)
	}
}
