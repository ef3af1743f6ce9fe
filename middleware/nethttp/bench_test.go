package httplock_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/benchkit"
)

// BenchmarkThroughput measures requests through the middleware on distinct
// keys (one per goroutine, 32 goroutines on 2 CPUs) to a handler that does
// nothing, and in the same run, on the same private server and client
// settings, the same handler behind lock.Do by hand, and behind the raw
// lock a hand-written middleware would use: SET key token NX PX + DEL.
// httplock/lock-do is the middleware's own cost; lock-do/raw-setnx-del is
// that of fencing, server time, ownership checks and the heartbeat.
func BenchmarkThroughput(b *testing.B) {
	rdb := benchkit.Client(b)
	const ttl = 30 * time.Second
	noop := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	var seq atomic.Int64

	b.Run("httplock", func(b *testing.B) {
		bk := benchkit.Backend(b, rdb, redisbackend.Options{})
		mw := httplock.Must(bk, httplock.FromHeader("Idempotency-Key"), httplock.WithTTL(ttl))
		run(b, mw(noop), &seq)
	})

	// The same lock without the middleware: what lock.Do costs on its own.
	b.Run("lock-do", func(b *testing.B) {
		bk := benchkit.Backend(b, rdb, redisbackend.Options{})
		do := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			err := lock.Do(r.Context(), bk, r.Header.Get("Idempotency-Key"), func(ctx context.Context, _ lock.Lease) error {
				noop.ServeHTTP(w, r.WithContext(ctx))
				return nil
			}, lock.WithTTL(ttl), lock.WithWait(0))
			if err != nil {
				w.WriteHeader(http.StatusConflict)
			}
		})
		run(b, do, &seq)
	})

	b.Run("raw-setnx-del", func(b *testing.B) {
		raw := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			key := "raw:" + r.Header.Get("Idempotency-Key")
			ok, err := rdb.SetNX(ctx, key, lockdriver.NewLockID(), ttl).Result()
			switch {
			case err != nil:
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			case !ok:
				w.WriteHeader(http.StatusConflict)
				return
			}
			defer rdb.Del(context.WithoutCancel(ctx), key)
			noop.ServeHTTP(w, r)
		})
		run(b, raw, &seq)
	})
}

func run(b *testing.B, h http.Handler, seq *atomic.Int64) {
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		key := "k" + strconv.FormatInt(seq.Add(1), 10)
		for pb.Next() {
			req := httptest.NewRequest(http.MethodPost, "/orders", nil)
			req.Header.Set("Idempotency-Key", key)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusNoContent {
				b.Errorf("status %d", rec.Code)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
