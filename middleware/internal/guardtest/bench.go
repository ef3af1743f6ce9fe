package guardtest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// Bench measures a's cost per request on one route, POST /orders, whose
// handler answers 201 with a small JSON body: "bare" is the framework
// without the middleware (bare serves s.Handler on s.Routes), "lock" the
// middleware with a new key per request, "replay-first" replay mode with
// a new key per request (the run that stores the response), "replayed"
// replay mode on a stored key. Each reports req/s and allocs/op, from 16
// goroutines per CPU on one private redis-server.
func Bench(b *testing.B, a Adapter, bare func(s Setup) http.Handler) {
	srv := redistest.Start(b)
	rdb := srv.Client(b, func(o *redis.Options) { o.PoolSize = 64 })
	bk, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "bench", FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		b.Fatal(err)
	}
	created := func(w http.ResponseWriter, _ *http.Request, _ lock.Lease, _ bool) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":1,"item":"book","qty":1}`))
	}
	build := func(replay *Replay) http.Handler {
		h, err := a.New(Setup{Backend: bk, Prefix: "orders:", Routes: []string{"/orders"}, Scope: Principal, Replay: replay, Handler: created})
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	var seq atomic.Int64
	fresh := func(string) string { return "k" + strconv.FormatInt(seq.Add(1), 10) }
	same := func(own string) string { return own }
	b.Run("bare", func(b *testing.B) {
		benchPost(b, bare(Setup{Routes: []string{"/orders"}, Handler: created}), fresh)
	})
	b.Run("lock", func(b *testing.B) { benchPost(b, build(nil), fresh) })
	b.Run("replay-first", func(b *testing.B) { benchPost(b, build(&Replay{}), fresh) })
	b.Run("replayed", func(b *testing.B) { benchPost(b, build(&Replay{}), same) })
}

// benchPost sends POST /orders from parallel goroutines, each with the
// key next gives for its own key; every answer must be a 201.
func benchPost(b *testing.B, h http.Handler, next func(own string) string) {
	b.ReportAllocs()
	b.SetParallelism(16)
	var seq atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		own := "own-" + strconv.FormatInt(seq.Add(1), 10)
		for pb.Next() {
			req := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(`{"item":"book","qty":1}`))
			req.Header.Set(Header, next(own))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusCreated {
				b.Errorf("status %d, want 201: %s", rec.Code, rec.Body)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
