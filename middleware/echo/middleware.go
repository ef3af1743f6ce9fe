package echolock

import (
	"context"
	"errors"
	"time"

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

// LeaseFrom returns the lease held for the request of c. It reports false
// outside the middleware, for skipped requests, and for requests let
// through by Config.FailOpen while the backend failed.
func LeaseFrom(c echo.Context) (lock.Lease, bool) {
	return guard.LeaseFrom(c.Request().Context())
}

// DefaultBusyHandler answers 409 Conflict with a Retry-After header and an
// application/problem+json body.
func DefaultBusyHandler(c echo.Context, retryAfter time.Duration, _ error) error {
	guard.WriteBusy(c.Response(), retryAfter)
	return nil
}

// DefaultErrorHandler answers an application/problem+json body with 400 Bad
// Request for a missing or invalid key (lock.CodeInvalidArgument) and 503
// Service Unavailable otherwise. The body never contains the key.
func DefaultErrorHandler(c echo.Context, err error) error {
	guard.WriteError(c.Response(), err)
	return nil
}
