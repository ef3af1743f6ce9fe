package httplock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/middleware/guard"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// stallBound is what a test accepts for an answer on a stalled Redis:
// the default backend timeout (1s), plus slack for a loaded machine.
// Without the bound the answers took 5 to 15 s.
const stallBound = guard.DefaultBackendTimeout + 1500*time.Millisecond

// TestStalledRedisAnswers503: with the README's backends (default go-redis
// options) and settings, a request on a SIGSTOPped Redis is answered 503
// with Retry-After within the backend timeout, whatever the route's wait:
// the README's idempotent route as written (replay, a 5s wait), a lock
// with a 5s wait and a lock without one. Once Redis resumes, the keys are free long
// before their TTL: what the stalled calls took is released in the
// background.
func TestStalledRedisAnswers503(t *testing.T) {
	srv := redistest.Start(t)
	backend, err := redisbackend.New(srv.Client(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	user := func(*http.Request) (string, error) { return "alice", nil }
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	routes := map[string][]httplock.Option{
		"lock, wait 5s": {httplock.WithWait(5 * time.Second)},
		"lock, no wait": {},
	}
	handlers := map[string]http.Handler{}
	for name, opts := range routes {
		mw, err := httplock.New(backend, httplock.FromIdempotencyKey(), append(opts, httplock.WithPrefix(name+":"))...)
		if err != nil {
			t.Fatal(err)
		}
		handlers[name] = mw(ok)
	}
	readme := http.NewServeMux() // the README's idempotent route, as written
	readmeNetHTTPReplay(srv.Client(t), readme, ok, user)
	handlers["README: replay, wait 5s"] = readme
	send := func(h http.Handler, key string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/orders", nil)
		r.Header.Set("Idempotency-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for name, h := range handlers { // connections open, scripts loaded
		if w := send(h, "warm"); w.Code != http.StatusOK {
			t.Fatalf("%s: warm-up answered %d, want 200", name, w.Code)
		}
	}

	srv.Pause(t)
	var wg sync.WaitGroup
	for name, h := range handlers {
		wg.Go(func() {
			start := time.Now()
			w := send(h, "k1")
			took := time.Since(start)
			t.Logf("%s: %d after %v", name, w.Code, took)
			if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
				t.Errorf("%s on a stalled Redis: %d, Retry-After %q; want 503 with Retry-After", name, w.Code, w.Header().Get("Retry-After"))
			}
			if took > stallBound {
				t.Errorf("%s on a stalled Redis answered after %v, want within %v", name, took, stallBound)
			}
		})
	}
	wg.Wait()
	srv.Resume(t)

	// The stalled attempts ran when Redis resumed; their release frees
	// the keys within seconds, not the 30s TTL.
	for name, h := range handlers {
		deadline := time.Now().Add(10 * time.Second)
		for {
			w := send(h, "k1")
			if w.Code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: key still refused (%d) 10s after Redis resumed", name, w.Code)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestStallAfterHandlerAnswersInTime: a Redis that stalls while the
// handler runs delays its answer by at most the backend timeout (the
// release's bound); the release is tried again in the background, so the
// key is free soon after Redis resumes.
func TestStallAfterHandlerAnswersInTime(t *testing.T) {
	srv := redistest.Start(t)
	backend, err := redisbackend.New(srv.Client(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	var pause sync.Once
	mw, err := httplock.New(backend, httplock.FromIdempotencyKey())
	if err != nil {
		t.Fatal(err)
	}
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pause.Do(func() { srv.Pause(t) })
		_, _ = w.Write([]byte("ok"))
	}))
	send := func() (int, time.Duration) {
		r := httptest.NewRequest(http.MethodPost, "/orders", nil).WithContext(context.Background())
		r.Header.Set("Idempotency-Key", "k")
		w := httptest.NewRecorder()
		start := time.Now()
		h.ServeHTTP(w, r)
		return w.Code, time.Since(start)
	}
	code, took := send()
	t.Logf("answered %d after %v", code, took)
	if code != http.StatusOK || took > stallBound {
		t.Errorf("a handler that ran as Redis stalled: %d after %v, want 200 within %v", code, took, stallBound)
	}
	srv.Resume(t)
	deadline := time.Now().Add(10 * time.Second)
	for n := 1; ; n++ {
		if code, _ := send(); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("key still held 10s after Redis resumed (%d tries): the release was not retried", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestBackendTimeoutKeepsTheWait: the backend timeout bounds silence, not
// the wait for a busy key. A request with a 5s wait on a key held for
// 2.5s (four times DefaultBackendTimeout... no: more than twice it) runs
// once the holder releases (more than twice the backend timeout later),
// while Redis answers every attempt.
func TestBackendTimeoutKeepsTheWait(t *testing.T) {
	srv := redistest.Shared(t)
	backend, err := redisbackend.New(srv.Client(t), &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	mw, err := httplock.New(backend, httplock.FromIdempotencyKey(), httplock.WithWait(5*time.Second),
		httplock.WithPrefix("wait:"), httplock.WithRouteScope(false))
	if err != nil {
		t.Fatal(err)
	}
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	held, err := backend.Acquire(ctx, "wait:::k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	hold := 2*guard.DefaultBackendTimeout + 500*time.Millisecond
	released := time.AfterFunc(hold, func() { _ = backend.Release(context.Background(), held.ID) })
	defer released.Stop()
	r := httptest.NewRequest(http.MethodPost, "/orders", nil)
	r.Header.Set("Idempotency-Key", "k")
	w := httptest.NewRecorder()
	start := time.Now()
	h.ServeHTTP(w, r)
	took := time.Since(start)
	if w.Code != http.StatusOK || took < hold {
		t.Errorf("a request waiting for a key held %v: %d after %v, want 200 after the release", hold, w.Code, took)
	}
}
