package guardtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// env is one scenario's backend on the shared Redis, under a key prefix of
// its own, with a count of the commands the backend sent.
type env struct {
	b    *redisbackend.Backend
	rdb  *redis.Client
	cmds *redistest.Counter
}

// newEnv returns the scenario's env on the shared server, or on a's own
// client and prefix (RunACL).
func (a Adapter) newEnv(t *testing.T) *env {
	t.Helper()
	if a.acl != nil {
		return newEnvPrefix(t, a.acl.client(t), a.acl.prefix(t))
	}
	return newEnvOn(t, redistest.Shared(t).Client(t))
}

func newEnvOn(t *testing.T, rdb *redis.Client) *env {
	t.Helper()
	return newEnvPrefix(t, rdb, redistest.Prefix(t))
}

func newEnvPrefix(t *testing.T, rdb *redis.Client, prefix string) *env {
	t.Helper()
	e := &env{rdb: rdb, cmds: redistest.Count(rdb)}
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: prefix, FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		t.Fatal(err)
	}
	e.b = b
	return e
}

// lockKey is the Redis key of the lock on the middleware key k
// (namespace included).
func (e *env) lockKey(k string) string { return e.b.Prefix() + ":" + k }

func (e *env) isLocked(t *testing.T, k string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	locked, err := e.b.IsLocked(ctx, k)
	if err != nil {
		t.Fatalf("IsLocked: %v", err)
	}
	return locked
}

// serve sends one POST / with the key header (none when key is nil) to h.
func serve(h http.Handler, key *string) *httptest.ResponseRecorder {
	return send(h, "/", key, "")
}

// send sends one POST to path with the key header (none when key is nil)
// and body to h.
func send(h http.Handler, path string, key *string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if key != nil {
		req.Header.Set(Header, *key)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func ptr(s string) *string { return &s }

// fire runs do n times concurrently, all released at once, and returns
// the answers in order.
func fire(n int, do func() *httptest.ResponseRecorder) []*httptest.ResponseRecorder {
	recs := make([]*httptest.ResponseRecorder, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			recs[i] = do()
		})
	}
	close(start)
	wg.Wait()
	return recs
}

// maxGauge tracks how many handlers are inside at once, and the peak.
type maxGauge struct{ cur, peak atomic.Int32 }

func (g *maxGauge) enter() int32 {
	n := g.cur.Add(1)
	for {
		p := g.peak.Load()
		if n <= p || g.peak.CompareAndSwap(p, n) {
			return n
		}
	}
}

func (g *maxGauge) leave() { g.cur.Add(-1) }

// problem is the RFC 9457 body of the default answers.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// checkProblem asserts rec is a problem+json answer with status want that
// does not reveal key.
func checkProblem(t *testing.T, rec *httptest.ResponseRecorder, want int, key string) {
	t.Helper()
	if rec.Code != want {
		t.Errorf("status = %d, want %d (body %q)", rec.Code, want, rec.Body.String())
		return
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var p problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Errorf("body %q is not JSON: %v", rec.Body.String(), err)
		return
	}
	if p.Status != want || p.Type == "" || p.Title == "" || p.Detail == "" {
		t.Errorf("problem = %+v, want status %d and type, title, detail set", p, want)
	}
	if len(key) >= 4 && strings.Contains(rec.Body.String(), key) {
		t.Errorf("body %q contains the raw key", rec.Body.String())
	}
}

// checkRetryAfter asserts the Retry-After header is a whole number of
// seconds in [lo, hi].
func checkRetryAfter(t *testing.T, rec *httptest.ResponseRecorder, lo, hi int) {
	t.Helper()
	v := rec.Header().Get("Retry-After")
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		t.Errorf("Retry-After = %q, want an integer in [%d, %d]", v, lo, hi)
	}
}

// wait blocks until ch is closed or d passes, and reports which.
func wait(ch <-chan struct{}, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

func isLocked(err error) bool { return errors.Is(err, lock.ErrLocked) }

// closeOnce closes a channel at most once.
type closeOnce struct {
	once sync.Once
	ch   chan struct{}
}

func newCloseOnce() *closeOnce { return &closeOnce{ch: make(chan struct{})} }

func (c *closeOnce) close() { c.once.Do(func() { close(c.ch) }) }

// countingBackend counts the Acquire calls that reach the backend.
type countingBackend struct {
	lock.Backend
	acquires atomic.Int64
}

// Acquire counts the call and passes it on.
func (c *countingBackend) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	c.acquires.Add(1)
	return c.Backend.Acquire(ctx, key, ttl)
}
