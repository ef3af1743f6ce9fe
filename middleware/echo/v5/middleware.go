package echolock

import (
	"context"

	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
	"github.com/syncguard-go/syncguard/middleware/internal/echocore"
)

var frame = echocore.Frame[*echo.Context]{
	Request: (*echo.Context).Request, SetRequest: (*echo.Context).SetRequest, Path: (*echo.Context).Path,
	Response: (*echo.Context).Response, Logger: (*echo.Context).Logger, Next: runNext,
}

// runNext runs next with the held context. In replay mode the handler
// writes to its own echo.Response over the guard's writer.
func runNext(ctx context.Context, g *core.Guard, c *echo.Context, next func(*echo.Context) error, wrap core.Wrap) error {
	req, w := c.Request(), c.Response()
	defer func() {
		c.SetRequest(req)
		c.SetResponse(w)
	}()
	c.SetRequest(req.WithContext(ctx))
	if !g.Replays() {
		return next(c)
	}
	c.SetResponse(echo.NewResponse(wrap(w), c.Logger()))
	err := next(c)
	if err != nil {
		c.Echo().HTTPErrorHandler(c, err) // rendered now, so it is captured
	}
	return err
}

// LeaseFrom returns the lease held for c's request, if any.
func LeaseFrom(c *echo.Context) (lock.Lease, bool) {
	return lock.LeaseFrom(c.Request().Context())
}
