package echolock_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labstack/echo/v5"
	"github.com/labstack/echo/v5/middleware"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo/v5"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// post sends POST target with Idempotency-Key k to e.
func post(e http.Handler, target, k string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(`{"item":"book"}`))
	req.Header.Set("Idempotency-Key", k)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// replayed returns a middleware in replay mode, without a scope.
func replayed(t *testing.T, r *echolock.ReplayConfig) echo.MiddlewareFunc {
	return echolock.NewWithConfig(echolock.Config{Backend: guardtest.NewBackend(t), KeyLookup: "header:Idempotency-Key", Unscoped: true, Replay: r})
}

// TestSkipperBeforeFuncLeaseFrom: a skipped request runs without a
// lease and without BeforeFunc; another runs under a lease on
// c.Request()'s context, with BeforeFunc once; the request and response
// after the middleware are the ones before it.
func TestSkipperBeforeFuncLeaseFrom(t *testing.T) {
	var before atomic.Int32
	mw := echolock.NewWithConfig(echolock.Config{Backend: guardtest.NewBackend(t), KeyLookup: "param:id",
		Skipper:    func(c *echo.Context) bool { return c.QueryParam("skip") != "" },
		BeforeFunc: func(*echo.Context) { before.Add(1) }})
	e := newEcho("/orders/:id", mw, func(c *echo.Context) error {
		l, ok := echolock.LeaseFrom(c)
		return c.String(http.StatusOK, l.Key+" "+string(l.Fence)+" "+map[bool]string{true: "held", false: "none"}[ok])
	})
	var sameReq, sameRes bool
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c *echo.Context) error {
			req, res := c.Request(), c.Response()
			err := next(c)
			sameReq, sameRes = c.Request() == req, c.Response() == res
			return err
		}
	})
	if rec := post(e, "/orders/7?skip=1", "k"); rec.Body.String() != "  none" || before.Load() != 0 {
		t.Errorf("skipped: %q, BeforeFunc ran %d times; want no lease, 0", rec.Body, before.Load())
	}
	if rec := post(e, "/orders/7", "k"); !regexp.MustCompile(`^POST /orders/\\:id::7 \d{15} held$`).MatchString(rec.Body.String()) || before.Load() != 1 {
		t.Errorf("locked: %q, BeforeFunc ran %d times; want the lease, once", rec.Body, before.Load())
	}
	if !sameReq || !sameRes {
		t.Errorf("same request after the middleware %v, same response %v; want both", sameReq, sameRes)
	}
	c := echo.New().NewContext(httptest.NewRequest(http.MethodGet, "/", nil), httptest.NewRecorder())
	if l, ok := echolock.LeaseFrom(c); ok || !reflect.DeepEqual(l, lock.Lease{}) {
		t.Errorf("LeaseFrom outside the middleware = %+v, %v; want zero, false", l, ok)
	}
}

// TestHandlerErrorFlow: without replay the handler's error is returned
// unchanged for Echo to render; in replay mode it is rendered once,
// inside, by e.HTTPErrorHandler, so a 4xx is stored and replayed, and
// the middleware returns nil.
func TestHandlerErrorFlow(t *testing.T) {
	errNotFound := echo.NewHTTPError(http.StatusNotFound, "no such order")
	tests := []struct {
		desc       string
		replay     bool
		err        error
		wantStatus int
		wantRuns   int32 // after two requests
	}{
		{"lock: returned unchanged", false, errNotFound, http.StatusNotFound, 2},
		{"lock: a lock error of the handler's own", false, lock.ErrLocked, http.StatusInternalServerError, 2},
		{"replay: a 404 stored and replayed", true, errNotFound, http.StatusNotFound, 1},
		{"replay: a 503 not stored", true, echo.NewHTTPError(http.StatusServiceUnavailable, "later"), http.StatusServiceUnavailable, 2},
		{"replay: a plain error (500) not stored", true, errors.New("boom"), http.StatusInternalServerError, 2},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			mw := echolock.New(guardtest.NewBackend(t), echolock.FromHeader("Idempotency-Key"))
			if tt.replay {
				mw = replayed(t, &echolock.ReplayConfig{})
			}
			var runs, handled atomic.Int32
			e := newEcho("/orders", mw, func(*echo.Context) error { runs.Add(1); return tt.err })
			e.HTTPErrorHandler = func(c *echo.Context, err error) {
				handled.Add(1) // does not check Committed, as many do not
				_ = c.String(echo.StatusCode(err)+map[bool]int{true: 500}[echo.StatusCode(err) == 0], "error: "+err.Error())
			}
			var returned []error
			e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c *echo.Context) error { err := next(c); returned = append(returned, err); return err }
			})
			a, b := post(e, "/orders", "k1"), post(e, "/orders", "k1")
			if a.Code != tt.wantStatus || b.Code != tt.wantStatus || a.Body.String() != "error: "+tt.err.Error() || b.Body.String() != a.Body.String() {
				t.Errorf("answers %d %q, %d %q; want %d and one rendering each", a.Code, a.Body, b.Code, b.Body, tt.wantStatus)
			}
			if runs.Load() != tt.wantRuns || handled.Load() != tt.wantRuns {
				t.Errorf("handler ran %d times, HTTPErrorHandler %d; want %d each", runs.Load(), handled.Load(), tt.wantRuns)
			}
			if want := map[bool]error{true: nil, false: tt.err}[tt.replay]; returned[0] != want {
				t.Errorf("middleware returned %v, want %v", returned[0], want)
			}
			if got := b.Header().Get(guard.HeaderReplayed) == "true"; got != (tt.wantRuns == 1) {
				t.Errorf("second answer replayed %v, want %v", got, tt.wantRuns == 1)
			}
		})
	}
}

// TestAnsweredThenError: in replay mode, a handler that answered and then
// returned an error has its answer alone sent and stored: Echo's
// HTTPErrorHandler sees the handler's response committed.
func TestAnsweredThenError(t *testing.T) {
	var runs atomic.Int32
	e := newEcho("/orders", replayed(t, &echolock.ReplayConfig{}), func(c *echo.Context) error {
		runs.Add(1)
		_ = c.String(http.StatusCreated, "made")
		return errors.New("a late error")
	})
	for i := range 2 {
		if rec := post(e, "/orders", "k"); rec.Code != http.StatusCreated || rec.Body.String() != "made" {
			t.Errorf("request %d: %d %q, want 201 \"made\" alone", i+1, rec.Code, rec.Body)
		}
	}
	if runs.Load() != 1 {
		t.Errorf("handler ran %d times, want once", runs.Load())
	}
}

// TestReplayByteForByte: what the handler wrote through Echo's response
// helpers comes back to the retry byte for byte, with its stored
// headers, and the handler runs once.
func TestReplayByteForByte(t *testing.T) {
	tests := []struct {
		desc string
		h    echo.HandlerFunc
	}{
		{"JSON", func(c *echo.Context) error {
			return c.JSON(http.StatusCreated, map[string]any{"id": 7, "items": []string{"a", "b"}})
		}},
		{"String", func(c *echo.Context) error { return c.String(http.StatusAccepted, "queued\n") }},
		{"Blob with a Location", func(c *echo.Context) error {
			c.Response().Header().Set(echo.HeaderLocation, "/orders/7")
			return c.Blob(http.StatusCreated, "application/octet-stream", []byte{0, 1, 2, 0xff})
		}},
		{"Stream, flushed", func(c *echo.Context) error {
			return c.Stream(http.StatusOK, echo.MIMETextPlain, strings.NewReader(strings.Repeat("line\n", 100)))
		}},
		{"Redirect", func(c *echo.Context) error { return c.Redirect(http.StatusSeeOther, "/orders/7") }},
		{"NoContent", func(c *echo.Context) error { return c.NoContent(http.StatusNoContent) }},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			var runs atomic.Int32
			e := newEcho("/orders", replayed(t, &echolock.ReplayConfig{}), func(c *echo.Context) error { runs.Add(1); return tt.h(c) })
			first, retry := post(e, "/orders", "k"), post(e, "/orders", "k")
			if runs.Load() != 1 || retry.Header().Get(guard.HeaderReplayed) != "true" {
				t.Fatalf("handler ran %d times, retry headers %v; want once and a replay", runs.Load(), retry.Header())
			}
			if first.Code != retry.Code || !bytes.Equal(first.Body.Bytes(), retry.Body.Bytes()) {
				t.Errorf("first %d %q, retry %d %q; want the same", first.Code, first.Body, retry.Code, retry.Body)
			}
			for _, h := range []string{echo.HeaderContentType, echo.HeaderLocation} {
				if first.Header().Get(h) != retry.Header().Get(h) {
					t.Errorf("%s: first %q, retry %q", h, first.Header().Get(h), retry.Header().Get(h))
				}
			}
		})
	}
}

// TestRecover: with Echo v5's Recover in front, a handler that panics
// before its response went out leaves the response uncommitted, so
// HTTPErrorHandler answers 500 alone, and the key is free again. One
// that panics after (its body passed MaxBody) leaves the partial body
// alone on the wire: over HTTP/2, no error body after it; the guard's
// log line goes to the context's logger.
func TestRecover(t *testing.T) {
	t.Run("before the response", func(t *testing.T) {
		var committed atomic.Bool
		e := newEcho("/orders", replayed(t, &echolock.ReplayConfig{}), func(c *echo.Context) error {
			_ = c.String(http.StatusCreated, "partial")
			panic("before the response went out")
		})
		e.HTTPErrorHandler = func(c *echo.Context, err error) {
			r, _ := echo.UnwrapResponse(c.Response())
			committed.Store(r.Committed)
			echo.DefaultHTTPErrorHandler(false)(c, err)
		}
		for i := range 2 { // the second finds the key free, nothing stored
			rec := post(e, "/orders", "k")
			if committed.Load() || rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), "partial") {
				t.Errorf("request %d: committed %v, %d %q; want uncommitted and Echo's 500 alone", i+1, committed.Load(), rec.Code, rec.Body)
			}
		}
	})
	t.Run("after the response started, Echo's Recover", func(t *testing.T) {
		e, logged, handled := afterStart(t, nil)
		body, err := postH2(t, e)
		if len(body) > 64 || handled.Load() != 0 || err == nil {
			t.Errorf("client read %q, %v; HTTPErrorHandler ran %d times; want the stream reset, none", body, err, handled.Load())
		}
		if !strings.Contains(logged.String(), "panicked after its response started") {
			t.Errorf("Echo's logger got %q, want the guard's line", logged)
		}
	})
	t.Run("after the response started, a recover of every panic", func(t *testing.T) {
		swallow := func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c *echo.Context) (err error) {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panic: %v", p)
					}
				}()
				return next(c)
			}
		}
		e, _, handled := afterStart(t, swallow)
		body, err := postH2(t, e)
		if string(body) != strings.Repeat("p", 64) || err != nil || handled.Load() != 1 {
			t.Errorf("client read %q, %v; HTTPErrorHandler ran %d times; want the partial body alone, once", body, err, handled.Load())
		}
	})
}

// afterStart returns an Echo whose handler panics after its body passed
// MaxBody, with recovering middleware rec in front (nil: Echo's Recover),
// Echo's logger writing to logged, and Echo's HTTPErrorHandler counted.
func afterStart(t *testing.T, rec echo.MiddlewareFunc) (e *echo.Echo, logged *bytes.Buffer, handled *atomic.Int32) {
	if rec == nil {
		rec = middleware.RecoverWithConfig(middleware.RecoverConfig{DisablePrintStack: true})
	}
	e = echo.New()
	e.Use(rec)
	e.POST("/orders", func(c *echo.Context) error {
		_, _ = c.Response().Write([]byte(strings.Repeat("p", 64)))
		panic("after the response started")
	}, replayed(t, &echolock.ReplayConfig{MaxBody: 16}))
	logged, handled = &bytes.Buffer{}, &atomic.Int32{}
	e.Logger = slog.New(slog.NewTextHandler(logged, nil))
	e.HTTPErrorHandler = func(c *echo.Context, err error) {
		handled.Add(1)
		echo.DefaultHTTPErrorHandler(false)(c, err) // writes nothing on a committed response
	}
	return e, logged, handled
}

// postH2 posts to e's /orders over HTTP/2 and returns what the client
// read, and the error that ended it.
func postH2(t *testing.T, e *echo.Echo) ([]byte, error) {
	srv := httptest.NewUnstartedServer(e)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orders", strings.NewReader("b"))
	req.Header.Set("Idempotency-Key", "k")
	res, err := srv.Client().Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.ProtoMajor != 2 {
		t.Fatalf("served over %s, want HTTP/2", res.Proto)
	}
	var b bytes.Buffer
	_, err = b.ReadFrom(res.Body)
	return b.Bytes(), err
}
