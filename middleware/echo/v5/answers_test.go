package echolock_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo/v5"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// refusals are the requests TestDefaultAnswers and TestProblemHandlers
// send, with the answer each must get.
var refusals = []struct {
	desc       string
	err        error // the backend's
	limit      int
	header     string // the Idempotency-Key sent; "" sends none
	wantStatus int
	wantType   string
	wantRetry  string
}{
	{"busy key", &lock.LockedError{ExpiresAt: time.Now().Add(time.Hour)}, 0, "the-key", http.StatusConflict, guard.TypeBusy, "1"},
	{"limit reached", &lock.LockedError{ExpiresAt: time.Now().Add(time.Hour)}, 3, "the-key", http.StatusTooManyRequests, guard.TypeLimitReached, "1"},
	{"missing key", lock.ErrLocked, 0, "", http.StatusBadRequest, guard.TypeInvalidKey, ""},
	{"backend down", &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire"}, 0, "the-key", http.StatusServiceUnavailable, guard.TypeUnavailable, "1"},
}

// refuse sends tt's request to e and returns the answer.
func refuse(e *echo.Echo, header string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/orders", nil)
	if header != "" {
		req.Header.Set("Idempotency-Key", header)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// TestDefaultAnswers: the default answers are *echo.HTTPError values
// wrapping the lock error, seen by the application's HTTPErrorHandler
// with Retry-After already set; Echo's default handler renders the
// message and its RFC 9457 handler renders guard's problem, under
// ProblemTypeBase.
func TestDefaultAnswers(t *testing.T) {
	for _, tt := range refusals {
		c := echolock.Config{Backend: guardtest.FailingIDs{Err: tt.err}, KeyLookup: "header:Idempotency-Key", Limit: tt.limit,
			ProblemTypeBase: "https://example.com/problems/"}
		handler := func(*echo.Context) error { t.Error("the handler ran"); return nil }
		t.Run(tt.desc+": custom HTTPErrorHandler", func(t *testing.T) {
			e := newEcho("/orders", echolock.NewWithConfig(c), handler)
			var seen error
			var retry string
			e.HTTPErrorHandler = func(c *echo.Context, err error) {
				seen, retry = err, c.Response().Header().Get(echo.HeaderRetryAfter)
				_ = c.NoContent(http.StatusTeapot)
			}
			rec := refuse(e, tt.header)
			var he *echo.HTTPError
			if !errors.As(seen, &he) || he.Code != tt.wantStatus || he.Message == "" || !errors.Is(seen, tt.err) && tt.header != "" {
				t.Errorf("HTTPErrorHandler got %#v; want an *echo.HTTPError %d with a message, wrapping %v", seen, tt.wantStatus, tt.err)
			}
			if retry != tt.wantRetry || rec.Code != http.StatusTeapot {
				t.Errorf("Retry-After at the handler %q, status %d; want %q and the handler's 418", retry, rec.Code, tt.wantRetry)
			}
		})
		t.Run(tt.desc+": Echo's HTTPErrorHandler", func(t *testing.T) {
			rec := refuse(newEcho("/orders", echolock.NewWithConfig(c), handler), tt.header)
			var body struct{ Message string }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Message == "" || strings.Contains(rec.Body.String(), "the-key") {
				t.Errorf("body %q (%v): want a message, without the key", rec.Body, err)
			}
			if rec.Code != tt.wantStatus || rec.Header().Get(echo.HeaderRetryAfter) != tt.wantRetry {
				t.Errorf("status %d, Retry-After %q; want %d, %q", rec.Code, rec.Header().Get(echo.HeaderRetryAfter), tt.wantStatus, tt.wantRetry)
			}
		})
		t.Run(tt.desc+": ProblemDetailsHTTPErrorHandler", func(t *testing.T) {
			e := newEcho("/orders", echolock.NewWithConfig(c), handler)
			e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false)
			checkProblem(t, refuse(e, tt.header), tt.wantStatus, "https://example.com/problems/"+strings.TrimPrefix(tt.wantType, guard.TypeURNPrefix), tt.wantRetry)
		})
	}
}

// TestProblemHandlers: ProblemBusyHandler and ProblemErrorHandler write
// httplock's problem answers and return nil, so no HTTPErrorHandler runs.
func TestProblemHandlers(t *testing.T) {
	for _, tt := range refusals {
		t.Run(tt.desc, func(t *testing.T) {
			mw := echolock.NewWithConfig(echolock.Config{Backend: guardtest.FailingIDs{Err: tt.err}, KeyLookup: "header:Idempotency-Key",
				Limit: tt.limit, BusyHandler: echolock.ProblemBusyHandler, ErrorHandler: echolock.ProblemErrorHandler})
			e := newEcho("/orders", mw, func(*echo.Context) error { t.Error("the handler ran"); return nil })
			e.HTTPErrorHandler = func(_ *echo.Context, err error) { t.Errorf("HTTPErrorHandler got %v", err) }
			checkProblem(t, refuse(e, tt.header), tt.wantStatus, tt.wantType, tt.wantRetry)
		})
	}
}

// checkProblem checks that rec is an application/problem+json answer.
func checkProblem(t *testing.T, rec *httptest.ResponseRecorder, status int, typ, retry string) {
	t.Helper()
	var p struct {
		Type, Title, Detail string
		Status              int
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if rec.Code != status || p.Status != status || p.Type != typ || p.Title == "" || p.Detail == "" {
		t.Errorf("status %d, problem %+v; want %d, type %s, a title and a detail", rec.Code, p, status, typ)
	}
	if ct := rec.Header().Get(echo.HeaderContentType); ct != guard.ProblemContentType || rec.Header().Get(echo.HeaderRetryAfter) != retry {
		t.Errorf("Content-Type %q, Retry-After %q; want %s, %q", ct, rec.Header().Get(echo.HeaderRetryAfter), guard.ProblemContentType, retry)
	}
}
