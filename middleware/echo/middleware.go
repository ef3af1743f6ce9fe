package echolock

import (
	"context"
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

func (c Config) middleware(g *guard.Guard) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(ec echo.Context) error {
			if c.Skipper(ec) {
				return next(ec)
			}
			if c.BeforeFunc != nil {
				c.BeforeFunc(ec)
			}
			req := ec.Request()
			x := guard.Exchange{W: ec.Response(), R: req, Route: guard.Route(req.Method, ec.Path(), req.URL.EscapedPath()),
				Key:  func() (string, error) { return c.KeyExtractor(ec) },
				Next: func(ctx context.Context, wrap guard.Wrap) error { return runNext(ctx, g, next, ec, wrap) }}
			if c.Scope != nil {
				x.Scope = func() (string, error) { return c.Scope(ec) }
			}
			if c.Replay != nil && c.Replay.Fingerprint != nil {
				x.Fingerprint = func() (string, error) { return c.Replay.Fingerprint(ec) }
			}
			switch out, err := g.Serve(x); {
			case out == guard.Ran && !g.Replays():
				return err
			case out != guard.Refused:
				// In replay mode the handler's error was rendered inside,
				// and captured; returned too, it would be rendered twice.
				return nil
			case errors.Is(err, lock.ErrLocked):
				ec.SetRequest(g.Refusal(req))
				return c.BusyHandler(ec, g.RetryAfter(x.Route, err), err)
			default:
				ec.SetRequest(g.Refusal(req))
				return c.ErrorHandler(ec, err)
			}
		}
	}
}

// runNext runs next with the held context and the guard's writer. The
// request and writer are restored after it; a panic before anything was
// sent leaves the response uncommitted, for Echo's Recover to answer.
func runNext(ctx context.Context, g *guard.Guard, next echo.HandlerFunc, ec echo.Context, wrap guard.Wrap) error {
	req, res := ec.Request(), ec.Response()
	w := res.Writer
	cw := wrap(w)
	returned := false
	defer func() {
		ec.SetRequest(req)
		res.Writer = w
		if !returned && g.Replays() && !guard.Sent(cw) {
			res.Committed, res.Status, res.Size = false, http.StatusOK, 0
		}
	}()
	ec.SetRequest(req.WithContext(ctx))
	res.Writer = cw
	err := next(ec)
	returned = true
	if err != nil && g.Replays() {
		ec.Error(err) // rendered now, so the answer is captured
	}
	return err
}

// LeaseFrom returns the lease held for c's request (lock.LeaseFrom of
// its context); false when none is held.
func LeaseFrom(c echo.Context) (lock.Lease, bool) {
	return lock.LeaseFrom(c.Request().Context())
}
