package httplock_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// BenchmarkReplay measures replay mode (32 goroutines on 2 CPUs, one
// private redis-server) on a handler that answers 201 with a small JSON
// body: first-run is a new Idempotency-Key per request (a record lookup,
// acquire, the lookup again under the lease, the handler, and the release
// that stores the response), replayed a key whose response is stored (one
// record lookup, then the stored response), and no-replay the same
// handler without replay mode (acquire and release) for reference. Compare
// their req/s: a replay costs less than a lock cycle.
func BenchmarkReplay(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b, func(o *redis.Options) { o.PoolSize = 64 })
	bk, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "bench", FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		b.Fatal(err)
	}
	created := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "/orders/1")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":1,"item":"book","qty":1}`))
	})
	key := httplock.WithKeyFunc(httplock.FromHeader("Idempotency-Key"))
	replay := httplock.Must(bk, key, httplock.WithReplay(time.Hour))(created)
	var seq atomic.Int64
	newKey := func() string { return "k" + strconv.FormatInt(seq.Add(1), 10) }

	b.Run("first-run", func(b *testing.B) {
		post(b, replay, newKey, "")
	})
	b.Run("replayed", func(b *testing.B) {
		post(b, replay, nil, "true")
	})
	b.Run("no-replay", func(b *testing.B) {
		post(b, httplock.Must(bk, key)(created), newKey, "")
	})
}

// post sends requests from parallel goroutines: each with a key from
// next, or with a key of the goroutine's own (stored before the timer
// starts) when next is nil; every answer must be the 201 with the
// Idempotent-Replayed value replayed ("*": any).
func post(b *testing.B, h http.Handler, next func() string, replayed string) {
	b.ReportAllocs()
	b.SetParallelism(16)
	var seq atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		own := "replay-" + strconv.FormatInt(seq.Add(1), 10)
		if next == nil {
			serveOne(b, h, own, "*") // stores it (or, in a later round, replays it)
		}
		for pb.Next() {
			k := own
			if next != nil {
				k = next()
			}
			if !serveOne(b, h, k, replayed) {
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func serveOne(b *testing.B, h http.Handler, key, replayed string) bool {
	req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(`{"item":"book","qty":1}`))
	req.Header.Set("Idempotency-Key", key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if got := rec.Header().Get(httpguard.HeaderReplayed); rec.Code != http.StatusCreated || (replayed != "*" && got != replayed) {
		b.Errorf("status %d, %s %q; want 201, %q", rec.Code, httpguard.HeaderReplayed, rec.Header().Get(httpguard.HeaderReplayed), replayed)
		return false
	}
	return true
}
