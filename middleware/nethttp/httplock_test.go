package httplock_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/internal/guardtest"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

// TestReplayNeedsRecorder: the error names what is missing.
func TestReplayNeedsRecorder(t *testing.T) {
	_, err := httplock.New(guardtest.NopBackend{}, httplock.FromHeader("K"), httplock.WithReplay(time.Hour), httplock.Unscoped())
	if err == nil || !strings.Contains(err.Error(), "lock.Recorder") {
		t.Errorf("New = %v, want an error naming lock.Recorder", err)
	}
	if _, err := httplock.New(guardtest.NopRecorder{}, httplock.FromHeader("K"), httplock.WithReplay(time.Hour),
		httplock.WithScope(func(*http.Request) (string, error) { return "u", nil }),
		httplock.WithReplayStatuses(func(int) bool { return true }), httplock.WithProblemTypeBase("https://example.com/problems/"),
		httplock.WithReplayHeaders("X-Order"), httplock.WithReplayMaxBody(10), httplock.WithReplayMaxRequestBody(10),
		httplock.WithFingerprint(func(*http.Request) (string, error) { return "", nil })); err != nil {
		t.Errorf("New with every replay option: %v", err)
	}
}

func TestNewConfigErrors(t *testing.T) {
	key := httplock.FromHeader("Idempotency-Key")
	tests := []struct {
		desc  string
		b     lock.Backend
		nokey bool
		opts  []httplock.Option
	}{
		{desc: "nil backend"},
		{desc: "nil key function", b: guardtest.NopBackend{}, nokey: true},
		{desc: "nil key function with options", b: guardtest.NopBackend{}, nokey: true, opts: []httplock.Option{nil, httplock.WithTTL(time.Minute)}},
		{desc: "negative TTL", b: guardtest.NopBackend{}, opts: []httplock.Option{httplock.WithTTL(-time.Second)}},
		{desc: "zero TTL", b: guardtest.NopBackend{}, opts: []httplock.Option{httplock.WithTTL(0)}},
		{desc: "negative wait", b: guardtest.NopBackend{}, opts: []httplock.Option{httplock.WithWait(-time.Second)}},
		{desc: "zero backend timeout", b: guardtest.NopBackend{}, opts: []httplock.Option{httplock.WithBackendTimeout(0)}},
		{desc: "negative backend timeout", b: guardtest.NopBackend{}, opts: []httplock.Option{httplock.WithBackendTimeout(-time.Second)}},
		{desc: "prefix not UTF-8", b: guardtest.NopBackend{}, opts: []httplock.Option{httplock.WithPrefix("\xff")}},
		{desc: "replay on a backend that is not a lock.Recorder", b: guardtest.NopBackend{}, opts: []httplock.Option{httplock.WithReplay(time.Hour)}},
		{desc: "replay TTL 0", b: guardtest.NopRecorder{}, opts: []httplock.Option{httplock.WithReplay(0)}},
		{desc: "replay header Content-Length", b: guardtest.NopRecorder{}, opts: []httplock.Option{httplock.WithReplay(time.Hour), httplock.WithReplayHeaders("Content-Length")}},
		{desc: "replay option without WithReplay", b: guardtest.NopRecorder{}, opts: []httplock.Option{httplock.WithReplayMaxBody(10)}},
		{desc: "limit 0", b: guardtest.NopLimiter{}, opts: []httplock.Option{httplock.WithLimit(0)}},
		{desc: "negative limit", b: guardtest.NopLimiter{}, opts: []httplock.Option{httplock.WithLimit(-1)}},
		{desc: "limit over lockdriver.MaxLimit", b: guardtest.NopLimiter{}, opts: []httplock.Option{httplock.WithLimit(lockdriver.MaxLimit + 1)}},
		{desc: "limit on a backend that is not a lock.IDBackend", b: guardtest.NopRecorder{}, opts: []httplock.Option{httplock.WithLimit(3)}},
		{desc: "limit with replay", b: guardtest.NopLimiter{}, opts: []httplock.Option{httplock.WithLimit(3), httplock.WithReplay(time.Hour)}},
		{desc: "replay without a scope", b: guardtest.NopRecorder{}, opts: []httplock.Option{httplock.WithReplay(time.Hour)}},
		{desc: "replay with fail-open", b: guardtest.NopRecorder{}, opts: []httplock.Option{httplock.WithReplay(time.Hour), httplock.Unscoped(), httplock.WithFailOpen(true)}},
		{desc: "a scope and Unscoped", b: guardtest.NopRecorder{}, opts: []httplock.Option{httplock.WithReplay(time.Hour), httplock.Unscoped(),
			httplock.WithScope(func(*http.Request) (string, error) { return "u", nil })}},
		{desc: "replay statuses without WithReplay", b: guardtest.NopRecorder{}, opts: []httplock.Option{httplock.WithReplayStatuses(func(int) bool { return true })}},
		{desc: "problem type base not a URI", b: guardtest.NopRecorder{}, opts: []httplock.Option{httplock.WithProblemTypeBase("problems/")}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			key := key
			if tt.nokey {
				key = nil
			}
			mw, err := httplock.New(tt.b, key, tt.opts...)
			if mw != nil || lock.CodeOf(err) != lock.CodeInvalidArgument {
				t.Errorf("New = %v, %v; want nil and an InvalidArgument error", mw != nil, err)
			}
			if tt.nokey && (err == nil || !strings.Contains(err.Error(), "key function argument")) {
				t.Errorf("New without a key: %v, want an error naming the key function argument", err)
			}
			defer func() {
				if recover() == nil {
					t.Error("Must did not panic")
				}
			}()
			httplock.Must(tt.b, key, tt.opts...)
		})
	}
	t.Run("limits 1 and lockdriver.MaxLimit on a lock.IDBackend", func(t *testing.T) {
		for _, n := range []int{1, lockdriver.MaxLimit} {
			if _, err := httplock.New(guardtest.NopLimiter{}, key, httplock.WithLimit(n)); err != nil {
				t.Errorf("New with WithLimit(%d): %v", n, err)
			}
		}
	})
	t.Run("nil options are ignored", func(t *testing.T) {
		if _, err := httplock.New(guardtest.NopBackend{}, key, nil, httplock.WithTTL(time.Minute), nil); err != nil {
			t.Errorf("New: %v", err)
		}
	})
}

// TestKeyFuncs routes requests through a Go 1.22 ServeMux and checks the
// key each KeyFunc locks: the prefix, the route, ':' and the key.
func TestKeyFuncs(t *testing.T) {
	const scope = "orders:POST /{tenant}/orders/{id}::" // the prefix, the route, no scope
	b := guardtest.NewBackend(t)
	tests := []struct {
		desc    string
		keyFunc httplock.KeyFunc
		header  string
		want    string // the lease's key; "" means 400
	}{
		{desc: "path value", keyFunc: httplock.FromPathValue("id"), want: scope + "42"},
		{desc: "missing path value", keyFunc: httplock.FromPathValue("nope")},
		{desc: "header", keyFunc: httplock.FromHeader("Idempotency-Key"), header: "abc", want: scope + "abc"},
		{desc: "compose", keyFunc: httplock.Compose(httplock.FromPathValue("tenant"), httplock.FromPathValue("id"), httplock.FromHeader("Idempotency-Key")),
			header: "abc", want: scope + "t1:42:abc"},
		{desc: "compose with a missing part", keyFunc: httplock.Compose(httplock.FromPathValue("id"), httplock.FromHeader("Idempotency-Key"))},
		{desc: "compose nothing", keyFunc: httplock.Compose()},
		{desc: "query", keyFunc: httplock.FromQuery("order"), want: scope + "7"},
		{desc: "empty query value", keyFunc: httplock.FromQuery("empty")},
		{desc: "missing query", keyFunc: httplock.FromQuery("nope")},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			var got string
			mw := httplock.Must(b, tt.keyFunc, httplock.WithPrefix("orders:"))
			mux := http.NewServeMux()
			mux.Handle("POST /{tenant}/orders/{id}", mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				l, _ := lock.LeaseFrom(r.Context())
				got = l.Key
			})))
			req := httptest.NewRequest(http.MethodPost, "/t1/orders/42?order=7&empty=", nil)
			if tt.header != "" {
				req.Header.Set("Idempotency-Key", tt.header)
			}
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, req)
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
}

func TestLeaseFromOutsideMiddleware(t *testing.T) {
	if l, ok := lock.LeaseFrom(context.Background()); ok || l != (lock.Lease{}) {
		t.Errorf("LeaseFrom = %+v, %v; want zero, false", l, ok)
	}
}

// TestErrorHandlerSeesBackendError checks the ErrorHandler receives the
// backend's error, so callers can tell an outage from a bad key.
func TestErrorHandlerSeesBackendError(t *testing.T) {
	var got error
	mw := httplock.Must(guardtest.Failing{Err: &lock.Error{Code: lock.CodeAuthFailed, Op: "acquire"}},
		httplock.FromHeader("K"),
		httplock.WithErrorHandler(func(w http.ResponseWriter, r *http.Request, err error) {
			got = err
			w.WriteHeader(http.StatusBadGateway)
		}))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("K", "k")
	rec := httptest.NewRecorder()
	mw(http.NotFoundHandler()).ServeHTTP(rec, req)
	if rec.Code != http.StatusBadGateway || lock.CodeOf(got) != lock.CodeAuthFailed {
		t.Errorf("status %d, error %v; want 502 and an AuthFailed error", rec.Code, got)
	}
}

// TestProblemTypeBase: WithProblemTypeBase turns the default answers'
// URN types into links under the base.
func TestProblemTypeBase(t *testing.T) {
	mw := httplock.Must(guardtest.NopBackend{},
		httplock.FromIdempotencyKey(),
		httplock.WithProblemTypeBase("https://example.com/problems/"))
	rec := httptest.NewRecorder()
	mw(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/orders", nil))
	var p struct{ Type string }
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusBadRequest ||
		p.Type != "https://example.com/problems/invalid-lock-key" {
		t.Errorf("answer %d %q (%v), want 400 of type https://example.com/problems/invalid-lock-key", rec.Code, rec.Body, err)
	}
}
