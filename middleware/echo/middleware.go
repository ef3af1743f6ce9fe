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
			x := guard.Exchange{
				W:     ec.Response(),
				R:     req,
				Route: guard.Route(req.Method, ec.Path(), req.URL.EscapedPath()),
				Key:   func() (string, error) { return c.KeyExtractor(ec) },
				Next: func(ctx context.Context, wrap func(http.ResponseWriter) http.ResponseWriter) error {
					// Later middleware and upstream code see the request
					// and writer they passed in once the lock is gone.
					res := ec.Response()
					w := res.Writer
					cw := wrap(w)
					returned := false
					defer func() {
						ec.SetRequest(req)
						res.Writer = w
						if !returned && g.Replays() && !guard.Sent(cw) {
							// A panic before the capture sent anything:
							// the response is not committed, for the
							// Recover middleware's answer. One that has
							// gone out stays committed (the guard aborts
							// the connection).
							res.Committed, res.Status, res.Size = false, http.StatusOK, 0
						}
					}()
					ec.SetRequest(req.WithContext(ctx))
					res.Writer = cw
					err := next(ec)
					returned = true
					if err != nil && g.Replays() {
						// Rendered now, so the answer is captured (and
						// stored or not by its status).
						ec.Error(err)
					}
					return err
				},
			}
			if c.Scope != nil {
				x.Scope = func() (string, error) { return c.Scope(ec) }
			}
			if c.Replay != nil && c.Replay.Fingerprint != nil {
				x.Fingerprint = func() (string, error) { return c.Replay.Fingerprint(ec) }
			}
			out, err := g.Serve(x)
			if out == guard.Refused {
				ec.SetRequest(g.Refusal(req))
			}
			switch {
			case out == guard.Ran && g.Replays():
				// The handler's error was rendered inside (and captured):
				// returned too, a HTTPErrorHandler that does not check
				// Committed would write a second body. Echo's Recover
				// middleware does the same.
				return nil
			case out == guard.Ran:
				return err
			case out == guard.Replayed:
				return nil
			case errors.Is(err, lock.ErrLocked):
				return c.BusyHandler(ec, g.RetryAfter(x.Route, err), err)
			default:
				return c.ErrorHandler(ec, err)
			}
		}
	}
}

// LeaseFrom returns the lease held for c's request (lock.LeaseFrom of
// its context); false when none is held.
func LeaseFrom(c echo.Context) (lock.Lease, bool) {
	return lock.LeaseFrom(c.Request().Context())
}
