package echolock

import (
	"context"

	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/echocore"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// ToMiddleware checks c and returns the middleware, or an
// InvalidArgument *lock.Error naming the bad field.
func (c Config) ToMiddleware() (echo.MiddlewareFunc, error) {
	key, err := keys.Extractor(c.KeyLookup, c.KeyExtractor)
	if err != nil {
		return nil, err
	}
	h := echocore.Hooks[*echo.Context]{Skipper: c.Skipper, Before: c.BeforeFunc, Key: key, Scope: c.Scope,
		Busy: DefaultBusyHandler, Error: DefaultErrorHandler}
	s := settings.Settings{Fields: true, Key: settings.Of(key), Scope: settings.Of(c.Scope),
		Prefix: c.Prefix, RouteScope: settings.RouteScope(c.RouteScope), TTL: c.TTL, Wait: c.Wait, BackendTimeout: c.BackendTimeout, Limit: c.Limit,
		FailOpen: c.FailOpen, LockOptions: c.LockOptions, Unscoped: c.Unscoped, ProblemBase: c.ProblemTypeBase}
	if r := c.Replay; r != nil {
		s.ReplayOn, h.Fingerprint, s.Fingerprint = true, r.Fingerprint, settings.Of(r.Fingerprint)
		s.Replay = settings.Replay{TTL: r.TTL, Headers: r.Headers, MaxBody: r.MaxBody, MaxRequestBody: r.MaxRequestBody, Statuses: r.Statuses}
	}
	if c.BusyHandler != nil {
		h.Busy = c.BusyHandler
	}
	if c.ErrorHandler != nil {
		h.Error = c.ErrorHandler
	}
	g, err := guard.New(c.Backend, s)
	if err != nil {
		return nil, err
	}
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error { return frame.Serve(g, &h, c, next) }
	}, nil
}

var frame = echocore.Frame[*echo.Context]{
	Request: (*echo.Context).Request, SetRequest: (*echo.Context).SetRequest, Path: (*echo.Context).Path,
	Response: (*echo.Context).Response, Logger: (*echo.Context).Logger, Next: runNext,
}

// runNext runs next with the held context. In replay mode the handler
// writes to its own echo.Response over the guard's writer.
func runNext(ctx context.Context, g *guard.Guard, c *echo.Context, next func(*echo.Context) error, wrap guard.Wrap) error {
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
