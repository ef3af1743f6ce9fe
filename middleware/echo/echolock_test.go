package echolock_test

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

func TestToMiddlewareErrors(t *testing.T) {
	valid := echolock.DefaultConfig
	valid.Backend = guardtest.NopBackend{}
	valid.KeyExtractor = echolock.FromHeader("Idempotency-Key")
	tests := []struct {
		desc   string
		mutate func(*echolock.Config)
	}{
		{"nil backend", func(c *echolock.Config) { c.Backend = nil }},
		{"nil key extractor", func(c *echolock.Config) { c.KeyExtractor = nil }},
		{"negative TTL", func(c *echolock.Config) { c.TTL = -time.Second }},
		{"negative wait", func(c *echolock.Config) { c.Wait = -time.Second }},
		{"prefix not UTF-8", func(c *echolock.Config) { c.Prefix = "\xff" }},
		{"replay on a backend that is not a lock.Recorder", func(c *echolock.Config) { c.Replay = &echolock.ReplayConfig{} }},
		{"negative replay TTL", func(c *echolock.Config) {
			c.Backend = guardtest.NopRecorder{}
			c.Replay = &echolock.ReplayConfig{TTL: -time.Second}
		}},
		{"replay header Transfer-Encoding", func(c *echolock.Config) {
			c.Backend = guardtest.NopRecorder{}
			c.Replay = &echolock.ReplayConfig{Headers: []string{"Transfer-Encoding"}}
		}},
		{"negative limit", func(c *echolock.Config) { c.Backend, c.Limit = guardtest.NopLimiter{}, -1 }},
		{"limit over lockdriver.MaxLimit", func(c *echolock.Config) { c.Backend, c.Limit = guardtest.NopLimiter{}, lockdriver.MaxLimit+1 }},
		{"limit on a backend that is not a lock.IDBackend", func(c *echolock.Config) { c.Backend, c.Limit = guardtest.NopRecorder{}, 3 }},
		{"limit with replay", func(c *echolock.Config) {
			c.Backend, c.Limit = guardtest.NopLimiter{}, 3
			c.Replay = &echolock.ReplayConfig{}
		}},
		{"replay without a scope", func(c *echolock.Config) {
			c.Backend = guardtest.NopRecorder{}
			c.Replay = &echolock.ReplayConfig{}
		}},
		{"replay with fail-open", func(c *echolock.Config) {
			c.Backend, c.FailOpen, c.Unscoped = guardtest.NopRecorder{}, true, true
			c.Replay = &echolock.ReplayConfig{}
		}},
		{"a scope and Unscoped", func(c *echolock.Config) {
			c.Scope = func(echo.Context) (string, error) { return "u", nil }
			c.Unscoped = true
		}},
		{"unknown RouteScope", func(c *echolock.Config) { c.RouteScope = 7 }},
		{"problem type base not a URI", func(c *echolock.Config) { c.ProblemTypeBase = "problems" }},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			c := valid
			tt.mutate(&c)
			mw, err := c.ToMiddleware()
			if mw != nil || lock.CodeOf(err) != lock.CodeInvalidArgument {
				t.Errorf("ToMiddleware = %v, %v; want nil and an InvalidArgument error", mw != nil, err)
			}
			mustPanic(t, "NewWithConfig", func() { echolock.NewWithConfig(c) })
		})
	}
	mustPanic(t, "New(nil, ...)", func() { echolock.New(nil, echolock.FromParam("id")) })
	mustPanic(t, "New(b, nil)", func() { echolock.New(guardtest.NopBackend{}, nil) })
	t.Run("replay needs a lock.Recorder, and says so", func(t *testing.T) {
		c := valid
		c.Replay = &echolock.ReplayConfig{}
		c.Scope = func(echo.Context) (string, error) { return "u", nil }
		c.Unscoped = false
		if _, err := c.ToMiddleware(); err == nil || !strings.Contains(err.Error(), "lock.Recorder") {
			t.Errorf("ToMiddleware = %v, want an error naming lock.Recorder", err)
		}
		c.Backend = guardtest.NopRecorder{}
		if _, err := c.ToMiddleware(); err != nil {
			t.Errorf("ToMiddleware on a Recorder: %v", err)
		}
	})
	t.Run("limits 1 and lockdriver.MaxLimit on a lock.IDBackend", func(t *testing.T) {
		for _, n := range []int{1, lockdriver.MaxLimit} {
			c := valid
			c.Backend, c.Limit = guardtest.NopLimiter{}, n
			if _, err := c.ToMiddleware(); err != nil {
				t.Errorf("ToMiddleware with Limit %d: %v", n, err)
			}
		}
	})
	t.Run("zero config fields take defaults", func(t *testing.T) {
		if _, err := (echolock.Config{Backend: guardtest.NopBackend{}, KeyExtractor: echolock.FromParam("id")}).ToMiddleware(); err != nil {
			t.Errorf("ToMiddleware: %v", err)
		}
	})
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestDefaultConfig(t *testing.T) {
	c := echolock.DefaultConfig
	if c.Skipper == nil || c.BusyHandler == nil || c.ErrorHandler == nil || c.TTL != guard.DefaultTTL ||
		c.Backend != nil || c.KeyExtractor != nil || c.Wait != 0 || c.FailOpen {
		t.Errorf("DefaultConfig = %+v", c)
	}
}

// TestHandlerErrorIsNotALockError checks that a handler's error, even one
// that looks like contention, is returned unchanged and the handler runs
// once.
func TestHandlerErrorIsNotALockError(t *testing.T) {
	b := guardtest.NewBackend(t)
	tests := []struct {
		desc       string
		err        error
		wantStatus int
	}{
		{"HTTP error", echo.NewHTTPError(http.StatusUnprocessableEntity, "bad order"), http.StatusUnprocessableEntity},
		{"lock.ErrLocked from the handler's own locking", &lock.LockedError{ExpiresAt: time.Now().Add(time.Hour)}, http.StatusInternalServerError},
		{"a backend-like error", &lock.Error{Code: lock.CodeServiceUnavailable}, http.StatusInternalServerError},
		{"nil", nil, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			var runs atomic.Int32
			var returned error
			e := newEcho("/orders/:id", echolock.New(b, echolock.FromParam("id")), func(c echo.Context) error {
				runs.Add(1)
				return tt.err
			})
			// Sees what the middleware returns, before Echo's error handler.
			e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					returned = next(c)
					return returned
				}
			})
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/orders/1", nil))
			if n := runs.Load(); n != 1 {
				t.Errorf("handler ran %d times, want 1", n)
			}
			if rec.Code != tt.wantStatus {
				t.Errorf("status %d, want %d", rec.Code, tt.wantStatus)
			}
			if returned != tt.err {
				t.Errorf("middleware returned %v, want the handler's error %v unchanged", returned, tt.err)
			}
		})
	}
}

// TestExtractorsAndHooks checks the extractors, BeforeFunc and Skipper
// through routes, and that the request is restored after the handler.
func TestExtractorsAndHooks(t *testing.T) {
	const route = "/:tenant/orders/:id"
	const scope = `orders:POST /\:tenant/orders/\:id::` // the prefix, the route (escaped), no scope
	b := guardtest.NewBackend(t)
	tests := []struct {
		desc   string
		key    echolock.KeyExtractor
		target string
		want   string // the lease's key; "" means 400
	}{
		{desc: "param", key: echolock.FromParam("id"), target: "/acme/orders/42", want: scope + "42"},
		{desc: "missing param", key: echolock.FromParam("nope"), target: "/acme/orders/42"},
		{desc: "query", key: echolock.FromQuery("ref"), target: "/acme/orders/42?ref=r1", want: scope + "r1"},
		{desc: "missing query", key: echolock.FromQuery("ref"), target: "/acme/orders/42"},
		{desc: "header", key: echolock.FromHeader("Idempotency-Key"), target: "/acme/orders/42", want: scope + "ik"},
		{desc: "compose", key: echolock.Compose(echolock.FromParam("tenant"), echolock.FromParam("id"), echolock.FromHeader("Idempotency-Key")),
			target: "/acme/orders/42", want: scope + "acme:42:ik"},
		{desc: "compose with a missing part", key: echolock.Compose(echolock.FromParam("id"), echolock.FromQuery("ref")), target: "/acme/orders/42"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			var got string
			var before int
			c := echolock.Config{Backend: b, KeyExtractor: tt.key, Prefix: "orders:",
				BeforeFunc: func(echo.Context) { before++ }}
			e := newEcho(route, echolock.NewWithConfig(c), func(c echo.Context) error {
				l, _ := echolock.LeaseFrom(c)
				got = l.Key
				return c.NoContent(http.StatusOK)
			})
			var reqBefore, reqAfter *http.Request
			e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					reqBefore = c.Request()
					err := next(c)
					reqAfter = c.Request()
					return err
				}
			})
			req := httptest.NewRequest(http.MethodPost, tt.target, nil)
			req.Header.Set("Idempotency-Key", "ik")
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			if before != 1 {
				t.Errorf("BeforeFunc ran %d times, want 1", before)
			}
			if reqAfter != reqBefore {
				t.Error("the request seen after the middleware is not the one passed in")
			}
			if tt.want == "" {
				if rec.Code != http.StatusBadRequest {
					t.Errorf("status %d, want 400", rec.Code)
				}
				return
			}
			if rec.Code != http.StatusOK || got != tt.want {
				t.Errorf("status %d, lease key %q; want 200 and %q", rec.Code, got, tt.want)
			}
		})
	}
	t.Run("skipped requests skip BeforeFunc", func(t *testing.T) {
		before := 0
		c := echolock.Config{Backend: b, KeyExtractor: echolock.FromParam("id"),
			Skipper:    func(echo.Context) bool { return true },
			BeforeFunc: func(echo.Context) { before++ }}
		e := newEcho(route, echolock.NewWithConfig(c), func(c echo.Context) error { return c.NoContent(http.StatusOK) })
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/acme/orders/42", nil))
		if rec.Code != http.StatusOK || before != 0 {
			t.Errorf("status %d, BeforeFunc ran %d times; want 200, 0", rec.Code, before)
		}
	})
}

// TestErrorHandlerError checks that the error of a custom ErrorHandler goes
// to Echo's HTTPErrorHandler.
func TestErrorHandlerError(t *testing.T) {
	errCustom := echo.NewHTTPError(http.StatusUnauthorized, "no key, no entry")
	var got error
	c := echolock.Config{Backend: guardtest.NopBackend{}, KeyExtractor: echolock.FromHeader("K"),
		ErrorHandler: func(_ echo.Context, err error) error {
			got = err
			return errCustom
		}}
	e := newEcho("/", echolock.NewWithConfig(c), func(c echo.Context) error { return nil })
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusUnauthorized || lock.CodeOf(got) != lock.CodeInvalidArgument {
		t.Errorf("status %d, error %v; want 401 and an InvalidArgument error", rec.Code, got)
	}
}

func TestLeaseFromOutsideMiddleware(t *testing.T) {
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), httptest.NewRecorder())
	if l, ok := echolock.LeaseFrom(c); ok || !reflect.DeepEqual(l, lock.Lease{}) {
		t.Errorf("LeaseFrom = %+v, %v; want zero, false", l, ok)
	}
}
