package echolock_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestReplayHandlerErrors: in replay mode a handler's error is rendered
// inside the middleware, so its answer is stored (a 4xx) or not (a 5xx,
// an error Echo renders 500), and not returned as well: the application's
// HTTPErrorHandler, even one that does not check Committed, is called
// once per error and writes one body.
func TestReplayHandlerErrors(t *testing.T) {
	tests := []struct {
		desc       string
		err        error
		wantStatus int
		wantRuns   int32 // after two requests
	}{
		{"a 404 is stored and replayed", echo.NewHTTPError(http.StatusNotFound, "no such order"), http.StatusNotFound, 1},
		{"a 503 is not stored", echo.NewHTTPError(http.StatusServiceUnavailable, "try later"), http.StatusServiceUnavailable, 2},
		{"a plain error (500) is not stored", errors.New("boom"), http.StatusInternalServerError, 2},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			var runs atomic.Int32
			var returned []error
			mw := echolock.NewWithConfig(echolock.Config{Backend: guardtest.NewBackend(t), KeyLookup: "header:Idempotency-Key",
				Unscoped: true, Replay: &echolock.ReplayConfig{}})
			e := newEcho("/orders", mw, func(c echo.Context) error {
				runs.Add(1)
				return tt.err
			})
			var handled atomic.Int32
			e.HTTPErrorHandler = func(err error, c echo.Context) {
				// Does not check c.Response().Committed, as many do.
				handled.Add(1)
				code := http.StatusInternalServerError
				var he *echo.HTTPError
				if errors.As(err, &he) {
					code = he.Code
				}
				_ = c.String(code, "error: "+err.Error())
			}
			e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error {
					err := next(c)
					returned = append(returned, err)
					return err
				}
			})
			var recs []*httptest.ResponseRecorder
			for range 2 {
				req := httptest.NewRequest(http.MethodPost, "/orders", nil)
				req.Header.Set("Idempotency-Key", "k1")
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				recs = append(recs, rec)
			}
			for i, rec := range recs {
				if rec.Code != tt.wantStatus {
					t.Errorf("request %d: status %d, want %d", i+1, rec.Code, tt.wantStatus)
				}
			}
			if recs[0].Body.String() != recs[1].Body.String() {
				t.Errorf("bodies %q and %q differ", recs[0].Body, recs[1].Body)
			}
			if returned[0] != nil {
				t.Errorf("middleware returned %v after rendering it, want nil", returned[0])
			}
			if want := "error: " + tt.err.Error(); recs[0].Body.String() != want {
				t.Errorf("body %q, want one rendering, %q", recs[0].Body, want)
			}
			if n := runs.Load(); n != tt.wantRuns {
				t.Errorf("handler ran %d times, want %d", n, tt.wantRuns)
			}
			if n := handled.Load(); n != tt.wantRuns {
				t.Errorf("HTTPErrorHandler called %d times for %d errors, want once each", n, tt.wantRuns)
			}
			replayed := recs[1].Header().Get(guard.HeaderReplayed) == "true"
			if replayed != (tt.wantRuns == 1) {
				t.Errorf("second answer replayed = %v, want %v", replayed, tt.wantRuns == 1)
			}
		})
	}
}
