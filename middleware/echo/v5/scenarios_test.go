package echolock_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo/v5"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestScenarios runs the shared middleware suite through an echo.Echo
// with Echo's Recover middleware in front. The suite checks httplock's
// problem+json answers, so it runs with ProblemBusyHandler and
// ProblemErrorHandler; TestDefaultAnswers tests the default ones.
func TestScenarios(t *testing.T) {
	guardtest.Run(t, guardtest.Adapter{New: build, RecoversPanics: true})
}

func build(s guardtest.Setup) (http.Handler, error) {
	c := echolock.Config{
		Backend:      s.Backend,
		KeyExtractor: echolock.FromHeader(guardtest.Header),
		Prefix:       s.Prefix,
		TTL:          s.TTL,
		Wait:         s.Wait,
		FailOpen:     s.FailOpen,
		Unscoped:     s.Public,
		Limit:        s.Limit,
		BusyHandler:  echolock.ProblemBusyHandler,
		ErrorHandler: echolock.ProblemErrorHandler,
	}
	if s.NoKey {
		c.KeyExtractor = nil
	}
	if s.Custom {
		c.BusyHandler = func(c *echo.Context, retryAfter time.Duration, err error) error {
			guardtest.WriteCustomBusy(c.Response(), retryAfter, err)
			return nil
		}
		c.ErrorHandler = func(c *echo.Context, err error) error {
			guardtest.WriteCustomError(c.Response(), err)
			return nil
		}
	}
	if s.Skip != nil {
		c.Skipper = func(c *echo.Context) bool { return s.Skip(c.Request()) }
	}
	switch {
	case s.NoRouteScope:
		c.RouteScope = echolock.RouteScopeOff
	case s.RouteScope:
		c.RouteScope = echolock.RouteScopeOn
	}
	if s.Scope != nil {
		c.Scope = func(c *echo.Context) (string, error) { return s.Scope(c.Request()) }
	}
	if r := s.Replay; r != nil {
		c.Replay = &echolock.ReplayConfig{TTL: r.TTL, Headers: r.Headers, MaxBody: r.MaxBody, MaxRequestBody: r.MaxRequestBody, Statuses: r.Statuses}
		if r.Fingerprint != nil {
			c.Replay.Fingerprint = func(c *echo.Context) (string, error) { return r.Fingerprint(c.Request()) }
		}
	}
	mw, err := c.ToMiddleware()
	if err != nil {
		return nil, err
	}
	return newEchoOn(guardtest.RoutesOf(s), mw, func(c *echo.Context) error {
		l, ok := lock.LeaseFrom(c.Request().Context())
		if el, eok := echolock.LeaseFrom(c); el != l || eok != ok {
			return fmt.Errorf("echolock.LeaseFrom = %+v, %v; lock.LeaseFrom = %+v, %v; want the same", el, eok, l, ok)
		}
		s.Handler(c.Response(), c.Request(), l, ok)
		return nil
	}), nil
}

// newEcho serves h behind Echo's Recover middleware and mw on route, for
// every method.
func newEcho(route string, mw echo.MiddlewareFunc, h echo.HandlerFunc) *echo.Echo {
	return newEchoOn([]string{route}, mw, h)
}

// newEchoOn is newEcho on several routes.
func newEchoOn(routes []string, mw echo.MiddlewareFunc, h echo.HandlerFunc) *echo.Echo {
	e := echo.New()
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{DisablePrintStack: true}))
	for _, route := range routes {
		e.Any(route, h, mw)
	}
	return e
}

// BenchmarkAdapter compares echolock with a bare Echo v5 (guardtest.Bench).
func BenchmarkAdapter(b *testing.B) {
	guardtest.Bench(b, guardtest.Adapter{New: build}, func(s guardtest.Setup) http.Handler {
		none := func(next echo.HandlerFunc) echo.HandlerFunc { return next }
		return newEchoOn(guardtest.RoutesOf(s), none, func(c *echo.Context) error {
			s.Handler(c.Response(), c.Request(), lock.Lease{}, false)
			return nil
		})
	})
}
