package echolock_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
)

// TestDefaultAnswersReachHTTPErrorHandler checks that the default answers
// to a busy key, a bad key and a failing backend are *echo.HTTPError
// values with the lock error as Internal, seen by the application's
// HTTPErrorHandler (with Retry-After already on the response for 409,
// 429 and 503),
// and that Echo's default HTTPErrorHandler renders them.
func TestDefaultAnswersReachHTTPErrorHandler(t *testing.T) {
	const secret = "the-key-itself"
	busy := guardtest.Failing{Err: &lock.LockedError{ExpiresAt: time.Now().Add(10 * time.Second)}}
	down := guardtest.Failing{Err: &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire"}}
	full := guardtest.FailingIDs{Err: &lock.LockedError{ExpiresAt: time.Now().Add(7 * time.Second)}}
	tests := []struct {
		desc       string
		b          lock.Backend
		limit      int
		header     string // the Idempotency-Key sent; "" sends none
		wantStatus int
		wantRetry  string
		wantErr    func(error) bool // of Internal
	}{
		{desc: "limit reached", b: full, limit: 3, header: secret, wantStatus: http.StatusTooManyRequests, wantRetry: "7",
			wantErr: func(err error) bool {
				return errors.Is(err, lock.ErrLocked) && errors.Is(err, guard.ErrLimitReached)
			}},
		{desc: "busy key", b: busy, header: secret, wantStatus: http.StatusConflict, wantRetry: "10",
			wantErr: func(err error) bool { return errors.Is(err, lock.ErrLocked) }},
		{desc: "missing key", b: busy, wantStatus: http.StatusBadRequest,
			wantErr: func(err error) bool { return lock.CodeOf(err) == lock.CodeInvalidArgument }},
		{desc: "key over 512 bytes", b: busy, header: strings.Repeat("k", lockdriver.MaxKeyBytes+1), wantStatus: http.StatusBadRequest,
			wantErr: func(err error) bool { return lock.CodeOf(err) == lock.CodeInvalidArgument }},
		{desc: "backend down", b: down, header: secret, wantStatus: http.StatusServiceUnavailable, wantRetry: "1",
			wantErr: func(err error) bool { return lock.CodeOf(err) == lock.CodeServiceUnavailable }},
	}
	for _, tt := range tests {
		serve := func(e *echo.Echo) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, "/orders", nil)
			if tt.header != "" {
				req.Header.Set("Idempotency-Key", tt.header)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			return rec
		}
		mw := echolock.NewWithConfig(echolock.Config{Backend: tt.b, KeyLookup: "header:Idempotency-Key", Limit: tt.limit})
		handler := func(c echo.Context) error {
			t.Error("the handler ran")
			return nil
		}
		t.Run(tt.desc+": custom HTTPErrorHandler", func(t *testing.T) {
			var seen error
			var retryAtHandler string
			e := newEcho("/orders", mw, handler)
			e.HTTPErrorHandler = func(err error, c echo.Context) {
				seen = err
				retryAtHandler = c.Response().Header().Get("Retry-After")
				_ = c.NoContent(http.StatusTeapot)
			}
			rec := serve(e)
			var he *echo.HTTPError
			if !errors.As(seen, &he) {
				t.Fatalf("HTTPErrorHandler got %T %v, want an *echo.HTTPError", seen, seen)
			}
			if he.Code != tt.wantStatus || !tt.wantErr(he.Internal) {
				t.Errorf("HTTPError code %d, Internal %v; want %d and the lock error", he.Code, he.Internal, tt.wantStatus)
			}
			if msg, ok := he.Message.(string); !ok || msg == "" || strings.Contains(msg, secret) {
				t.Errorf("HTTPError message %#v: want a non-empty string without the key", he.Message)
			}
			if retryAtHandler != tt.wantRetry {
				t.Errorf("Retry-After seen by HTTPErrorHandler %q, want %q", retryAtHandler, tt.wantRetry)
			}
			if rec.Code != http.StatusTeapot {
				t.Errorf("status %d, want the HTTPErrorHandler's 418", rec.Code)
			}
		})
		t.Run(tt.desc+": Echo's HTTPErrorHandler", func(t *testing.T) {
			rec := serve(newEcho("/orders", mw, handler))
			var body struct{ Message string }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tt.wantStatus || rec.Header().Get("Retry-After") != tt.wantRetry || body.Message == "" {
				t.Errorf("status %d, Retry-After %q, body %q; want %d, %q and a message",
					rec.Code, rec.Header().Get("Retry-After"), rec.Body, tt.wantStatus, tt.wantRetry)
			}
			if strings.Contains(rec.Body.String(), secret) {
				t.Errorf("body %q contains the key", rec.Body)
			}
		})
	}
}

// TestFailOpenDefault checks that with FailOpen a failing backend runs the
// handler without a lease and reaches no HTTPErrorHandler.
func TestFailOpenDefault(t *testing.T) {
	down := guardtest.Failing{Err: &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire"}}
	mw := echolock.NewWithConfig(echolock.Config{Backend: down, KeyLookup: "header:K", FailOpen: true})
	e := newEcho("/", mw, func(c echo.Context) error {
		if _, ok := echolock.LeaseFrom(c); ok {
			t.Error("LeaseFrom reported a lease with the backend down")
		}
		return c.NoContent(http.StatusOK)
	})
	e.HTTPErrorHandler = func(err error, c echo.Context) { t.Errorf("HTTPErrorHandler got %v", err) }
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("K", "k")
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Errorf("status %d, want 200", rec.Code)
	}
}

// TestProblemHandlers checks that ProblemBusyHandler and
// ProblemErrorHandler give the problem+json answers httplock gives and
// return nil, so no HTTPErrorHandler runs. (TestScenarios runs the whole
// suite with them.)
func TestProblemHandlers(t *testing.T) {
	busy := guardtest.Failing{Err: &lock.LockedError{ExpiresAt: time.Now().Add(10 * time.Second)}}
	down := guardtest.Failing{Err: &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire"}}
	full := guardtest.FailingIDs{Err: &lock.LockedError{ExpiresAt: time.Now().Add(10 * time.Second)}}
	tests := []struct {
		desc       string
		b          lock.Backend
		limit      int
		header     string
		wantStatus int
		wantType   string
		wantRetry  string
	}{
		{"busy key", busy, 0, "k", http.StatusConflict, "urn:syncguard:problem:lock-busy", "10"},
		{"limit reached", full, 3, "k", http.StatusTooManyRequests, "urn:syncguard:problem:concurrency-limit-reached", "10"},
		{"missing key", busy, 0, "", http.StatusBadRequest, "urn:syncguard:problem:invalid-lock-key", ""},
		{"backend down", down, 0, "k", http.StatusServiceUnavailable, "urn:syncguard:problem:lock-unavailable", "1"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			mw := echolock.NewWithConfig(echolock.Config{Backend: tt.b, KeyLookup: "header:K", Limit: tt.limit,
				BusyHandler: echolock.ProblemBusyHandler, ErrorHandler: echolock.ProblemErrorHandler})
			e := newEcho("/", mw, func(echo.Context) error { t.Error("the handler ran"); return nil })
			e.HTTPErrorHandler = func(err error, c echo.Context) { t.Errorf("HTTPErrorHandler got %v", err) }
			req := httptest.NewRequest(http.MethodPost, "/", nil)
			if tt.header != "" {
				req.Header.Set("K", tt.header)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			var p struct {
				Type, Title, Detail string
				Status              int
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if rec.Code != tt.wantStatus || rec.Header().Get("Content-Type") != "application/problem+json" ||
				rec.Header().Get("Retry-After") != tt.wantRetry {
				t.Errorf("status %d, headers %v; want %d, application/problem+json, Retry-After %q",
					rec.Code, rec.Header(), tt.wantStatus, tt.wantRetry)
			}
			if p.Type != tt.wantType || p.Status != tt.wantStatus || p.Title == "" || p.Detail == "" {
				t.Errorf("problem %+v, want type %s, status %d, a title and a detail", p, tt.wantType, tt.wantStatus)
			}
		})
	}
}
