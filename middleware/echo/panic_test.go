package echolock_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v4"

	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestPanicAfterStartStaysCommitted: a handler that panics once its
// response has started (its body passed MaxBody) leaves the Echo response
// committed, so the HTTPErrorHandler writes no second body after the
// first. Over HTTP/2 the connection cannot be hijacked and closed, and a
// recovering middleware that hands every panic to c.Error (as many do,
// letting http.ErrAbortHandler through too) is what stands between the
// partial body and an error body appended to it.
func TestPanicAfterStartStaysCommitted(t *testing.T) {
	var committed atomic.Bool
	mw := echolock.NewWithConfig(echolock.Config{Backend: guardtest.NewBackend(t), KeyLookup: "header:Idempotency-Key",
		Unscoped: true, Replay: &echolock.ReplayConfig{MaxBody: 16}})
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) (err error) {
			defer func() {
				if p := recover(); p != nil {
					committed.Store(c.Response().Committed)
					c.Error(fmt.Errorf("panic: %v", p))
				}
			}()
			return next(c)
		}
	})
	partial := strings.Repeat("p", 64)
	e.POST("/orders", func(c echo.Context) error {
		_, _ = c.Response().Write([]byte(partial))
		panic("after the response started")
	}, mw)
	srv := httptest.NewUnstartedServer(e)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	req, err := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader("b"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Idempotency-Key", "k")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body) // an error here is the stream's reset
	if res.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", res.Proto)
	}
	if !committed.Load() {
		t.Error("the response was no longer committed after the panic, though it had gone out")
	}
	if string(body) != partial {
		t.Errorf("client read %d %q, want the partial body alone (no second body after it)", res.StatusCode, body)
	}
}
