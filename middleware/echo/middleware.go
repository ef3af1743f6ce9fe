package echolock

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/core"
	"github.com/syncguard-go/syncguard/middleware/internal/echocore"
)

var frame = echocore.Frame[echo.Context]{
	Request: echo.Context.Request, SetRequest: echo.Context.SetRequest, Path: echo.Context.Path,
	Response: func(c echo.Context) http.ResponseWriter { return c.Response() },
	Next:     runNext,
}

// runNext runs next with the held context and the guard's writer. The
// request and writer are restored after it; a panic before anything was
// sent leaves the response uncommitted, for Echo's Recover to answer.
func runNext(ctx context.Context, g *core.Guard, ec echo.Context, next func(echo.Context) error, wrap core.Wrap) error {
	req, res := ec.Request(), ec.Response()
	w := res.Writer
	cw := wrap(w)
	returned := false
	defer func() {
		ec.SetRequest(req)
		res.Writer = w
		if !returned && g.Replays() && !core.Sent(cw) {
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

// LeaseFrom returns the lease held for c's request, if any.
func LeaseFrom(c echo.Context) (lock.Lease, bool) {
	return lock.LeaseFrom(c.Request().Context())
}
