package httplock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestREADMEReplayKeepsRedisBounded runs the README's idempotent route as
// written (readmeNetHTTPReplay, the region README.md quotes) on a
// redis-server of its own: 3,000 requests with distinct Idempotency-Keys
// leave at most 200 keys without an expiry (the striped fence counters and
// the backend's config record), not one fence counter per key.
func TestREADMEReplayKeepsRedisBounded(t *testing.T) {
	const requests, maxPersistent = 3000, 200
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	mux := http.NewServeMux()
	createOrder := func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("created")) }
	readmeNetHTTPReplay(rdb, mux, createOrder, func(*http.Request) (string, error) { return "alice", nil })
	for i := range requests {
		r := httptest.NewRequest(http.MethodPost, "/orders", nil)
		r.Header.Set("Idempotency-Key", "order-"+strconv.Itoa(i))
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, w.Code, w.Body)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	persistent, all := 0, 0
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		all++
		ttl, err := rdb.PTTL(ctx, iter.Val()).Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl == -1 { // no expiry (-2: gone since the scan)
			persistent++
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests with distinct keys: %d keys in Redis, %d without expiry", requests, all, persistent)
	if persistent > maxPersistent {
		t.Errorf("%d keys without expiry after %d distinct Idempotency-Keys, want at most %d", persistent, requests, maxPersistent)
	}
}

// TestReplayRefusesPerKeyFences: replay on a backend with a fence counter
// per key (redisbackend without FenceStripes) is refused when built, with
// an InvalidArgument naming FenceStripes and nothing sent to Redis; the
// same backend still serves a lock route, and a striped one serves replay.
func TestReplayRefusesPerKeyFences(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	perKey, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	cmds := redistest.Count(rdb)
	replay := []httplock.Option{httplock.Unscoped(), httplock.WithReplay(time.Hour)}
	_, err = httplock.New(perKey, httplock.FromIdempotencyKey(), replay...)
	if lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), "FenceStripes") {
		t.Errorf("replay on per-key fences: %v, want InvalidArgument naming FenceStripes", err)
	}
	if _, err := httplock.New(perKey, httplock.FromIdempotencyKey()); err != nil {
		t.Errorf("a lock route on per-key fences: %v", err)
	}
	if n := cmds.Commands.Load(); n != 0 {
		t.Errorf("%d commands sent while building the middleware, want none", n)
	}
	striped, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t) + "s", FenceStripes: 16, DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := httplock.New(striped, httplock.FromIdempotencyKey(), replay...); err != nil {
		t.Errorf("replay on striped fences: %v", err)
	}
}
