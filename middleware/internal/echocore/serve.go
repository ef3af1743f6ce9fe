package echocore

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
)

// Frame is how the middleware reaches one Echo version's context C.
type Frame[C any] struct {
	Request    func(C) *http.Request
	SetRequest func(C, *http.Request)
	Path       func(C) string
	// Response is where replayed responses go.
	Response func(C) http.ResponseWriter
	// Logger, when not nil, gets the guard's log lines.
	Logger func(C) *slog.Logger
	// Next runs next with ctx and the guard's writer (see
	// core.Exchange.Next).
	Next func(ctx context.Context, g *core.Guard, c C, next func(C) error, wrap core.Wrap) error
}

// Hooks are a Config's functions. Busy and Error are required.
type Hooks[C any] struct {
	Skipper                 func(C) bool
	Before                  func(C)
	Key, Scope, Fingerprint func(C) (string, error)
	Busy                    func(c C, retryAfter time.Duration, err error) error
	Error                   func(c C, err error) error
}

// Serve runs next for c under g, or answers through h.
func (f *Frame[C]) Serve(g *core.Guard, h *Hooks[C], c C, next func(C) error) error {
	if h.Skipper != nil && h.Skipper(c) {
		return next(c)
	}
	if h.Before != nil {
		h.Before(c)
	}
	req := f.Request(c)
	x := core.Exchange{W: f.Response(c), R: req, Route: core.Route(req.Method, f.Path(c), req.URL.EscapedPath()),
		Key:  func() (string, error) { return h.Key(c) },
		Next: func(ctx context.Context, wrap core.Wrap) error { return f.Next(ctx, g, c, next, wrap) }}
	if f.Logger != nil {
		x.Log = f.Logger(c)
	}
	if h.Scope != nil {
		x.Scope = func() (string, error) { return h.Scope(c) }
	}
	if h.Fingerprint != nil {
		x.Fingerprint = func() (string, error) { return h.Fingerprint(c) }
	}
	switch out, err := g.Serve(x); {
	case out == core.Ran && !g.Replays():
		return err
	case out != core.Refused:
		// In replay mode the handler's error was rendered inside,
		// and captured; returned too, it would be rendered twice.
		return nil
	case errors.Is(err, lock.ErrLocked):
		f.SetRequest(c, g.Refusal(req))
		return h.Busy(c, g.RetryAfter(x.Route, err), err)
	default:
		f.SetRequest(c, g.Refusal(req))
		return h.Error(c, err)
	}
}
