package echolock

import (
	"context"
	"errors"

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
			key, err := g.Key(c.KeyExtractor(ec))
			if err != nil {
				return c.ErrorHandler(ec, err)
			}
			req := ec.Request()
			ran, err := g.Run(req.Context(), key, func(ctx context.Context) error {
				// Later middleware and upstream code see the request they
				// passed in once the lock is gone.
				defer ec.SetRequest(req)
				ec.SetRequest(req.WithContext(ctx))
				return next(ec)
			})
			switch {
			case ran:
				return err
			case errors.Is(err, lock.ErrLocked):
				return c.BusyHandler(ec, g.RetryAfter(err), err)
			default:
				return c.ErrorHandler(ec, err)
			}
		}
	}
}

// LeaseFrom returns the lease held for the request of c: lock.LeaseFrom of
// the request's context, which data-layer code can call without echo. It
// reports false outside the middleware, for skipped requests, and for
// requests let through by Config.FailOpen while the backend failed.
func LeaseFrom(c echo.Context) (lock.Lease, bool) {
	return lock.LeaseFrom(c.Request().Context())
}
