package redisbackend_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/benchkit"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// BenchmarkCycle measures Acquire+Release cycles on distinct keys with 32
// goroutines (RunParallel with parallelism 16 on 2 CPUs; more on bigger
// machines), and in the same run, on the same private server and client
// settings, the raw baseline a lock without fencing, server time or the
// reverse index would cost: SET key val NX PX + DEL.
func BenchmarkCycle(b *testing.B) {
	rdb := benchkit.Client(b)
	ctx := context.Background()
	const ttl = 30 * time.Second
	var seq atomic.Int64
	nextKey := func(prefix string) string {
		return prefix + strconv.FormatInt(seq.Add(1), 10)
	}

	cycle := func(b *testing.B, ctx context.Context, limit int) {
		bk := benchkit.Backend(b, rdb, redisbackend.Options{})
		b.ReportAllocs()
		b.SetParallelism(16)
		usec := scriptUsec(b, rdb)
		b.Cleanup(func() {
			b.ReportMetric(float64(scriptUsec(b, rdb)-usec)/float64(b.N), "redis-µs/cycle")
		})
		b.RunParallel(func(pb *testing.PB) {
			key := nextKey("k")
			for pb.Next() {
				// A slot of a limit is of the key's own, so uncontended like
				// the lock's.
				l, err := acquireOrSlot(ctx, bk, key, limit, ttl)
				if err != nil {
					b.Error(err)
					return
				}
				if err := bk.Release(ctx, l.ID); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.Run("syncguard", func(b *testing.B) { cycle(b, ctx, 0) })
	b.Run("syncguard-slot", func(b *testing.B) { cycle(b, ctx, 4) })
	// With a deadline, as a request's context may have: one this far away
	// is past the client's own bound, so each call still goes out from its
	// caller's goroutine (internal/transport/direct.go).
	b.Run("syncguard-deadline", func(b *testing.B) {
		dctx, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		cycle(b, dctx, 0)
	})

	b.Run("raw-setnx-del", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			key := nextKey("raw:")
			for pb.Next() {
				ok, err := rdb.SetNX(ctx, key, lockdriver.NewLockID(), ttl).Result()
				if err != nil || !ok {
					b.Errorf("SET NX = %v, %v", ok, err)
					return
				}
				if err := rdb.Del(ctx, key).Err(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkSerialCycle measures Acquire+Release cycles from one goroutine
// on distinct keys, with the three contexts users have, on a client with
// go-redis's defaults: one that cannot end (jobs); one that can be
// cancelled, without a deadline (net/http's request context); a 5 s
// deadline (asynq's kind), which comes before the client's own bound, so
// each call waits for its reply on a goroutine of its own
// (internal/transport); and the same deadline on a client that sets
// ContextTimeoutEnabled (each call is sent from the caller's goroutine).
func BenchmarkSerialCycle(b *testing.B) {
	srv := redistest.Start(b)
	for _, tc := range []struct {
		desc       string
		ctx        func() (context.Context, context.CancelFunc)
		ctxTimeout bool
	}{
		{desc: "background", ctx: func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{desc: "cancellable", ctx: func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
		{desc: "deadline5s", ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 5*time.Second)
		}},
		{desc: "deadline5s-ctxtimeout", ctxTimeout: true, ctx: func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 5*time.Second)
		}},
	} {
		b.Run(tc.desc, func(b *testing.B) {
			rdb := srv.Client(b, func(o *redis.Options) { o.ContextTimeoutEnabled = tc.ctxTimeout })
			bk, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "serial"})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				ctx, cancel := tc.ctx() // a request's: one per cycle
				l, err := bk.Acquire(ctx, "k"+strconv.Itoa(i), 30*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if err := bk.Release(ctx, l.ID); err != nil {
					b.Fatal(err)
				}
				cancel()
			}
		})
	}
}

// BenchmarkDo measures lock.Do around an empty function (acquire, start
// and stop the heartbeat, release) on distinct keys.
func BenchmarkDo(b *testing.B) {
	rdb := benchkit.Client(b)
	bk := benchkit.Backend(b, rdb, redisbackend.Options{})
	ctx := context.Background()
	var seq atomic.Int64
	noop := func(context.Context, lock.Lease) error { return nil }
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		key := "do" + strconv.FormatInt(seq.Add(1), 10)
		for pb.Next() {
			if err := lock.Do(ctx, bk, key, noop); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHotKey measures 16 goroutines contending on one key through
// lock.Acquire, holding it for no time: one op is one successful
// acquisition. It reports acquisitions/s, the p50 and p99 handoff (from a
// Release returning to the next successful Acquire returning, paired by
// fence; 0 when the next Acquire returned first) and client commands per
// acquisition. As in bench/, a contender that has just released waits
// until another one has acquired (at most 1s) before it tries again, so
// every handoff goes to a waiter rather than to the releaser taking the
// lock straight back while the others sleep. Sub-benchmarks on the same private server: "notify" (release
// notifications, default backoff), "poll-default" (DisableNotifications,
// default backoff) and "poll-fixed-10ms" (DisableNotifications, a fixed
// 10ms retry without jitter: the redislock-like baseline).
func BenchmarkHotKey(b *testing.B) {
	rdb := benchkit.Client(b)
	counter := redistest.Count(rdb)
	// The last WithRetry wins as a whole, so each case gives one schedule.
	long := func(r lock.Retry) []lock.Option {
		r.MaxRetries = 1 << 30
		return []lock.Option{lock.WithWait(time.Minute), lock.WithRetry(r)}
	}
	cases := []struct {
		name    string
		disable bool
		opts    []lock.Option
	}{
		{"notify", false, long(lock.Retry{})},
		{"poll-default", true, long(lock.Retry{})},
		{"poll-fixed-10ms", true, long(lock.Retry{BaseDelay: 10 * time.Millisecond, Fixed: true, NoJitter: true})},
	}
	var run atomic.Int64
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			bk := benchkit.Backend(b, rdb, redisbackend.Options{DisableNotifications: tc.disable})
			defer bk.Close()
			key := "hot" + strconv.FormatInt(run.Add(1), 10)
			ctx := context.Background()
			// Fences of a fresh key count 1, 2, ...: acquisition f follows
			// the release of f-1.
			acquiredAt := make([]int64, b.N+2)
			releasedAt := make([]int64, b.N+2)
			var left atomic.Int64
			left.Store(int64(b.N))
			// next is closed at the next acquisition; finished when all are done.
			var mu sync.Mutex
			next, finished := make(chan struct{}), make(chan struct{})
			var count int
			acquired := func() <-chan struct{} {
				mu.Lock()
				defer mu.Unlock()
				close(next)
				next = make(chan struct{})
				if count++; count == b.N {
					close(finished)
				}
				return next
			}
			var wg sync.WaitGroup
			cmds := counter.Commands.Load()
			b.ResetTimer()
			start := time.Now()
			for range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					yield := time.NewTimer(time.Second)
					defer yield.Stop()
					for left.Add(-1) >= 0 {
						l, err := lock.Acquire(ctx, bk, key, tc.opts...)
						if err != nil {
							b.Error(err)
							return
						}
						now := time.Now().UnixNano()
						f, err := strconv.Atoi(string(l.Fence))
						if err != nil || f < 1 || f > b.N {
							b.Errorf("fence %q out of range for %d acquisitions", l.Fence, b.N)
							return
						}
						acquiredAt[f] = now
						others := acquired()
						if err := bk.Release(ctx, l.ID); err != nil {
							b.Error(err)
							return
						}
						releasedAt[f] = time.Now().UnixNano()
						yield.Reset(time.Second)
						select {
						case <-others:
						case <-finished:
						case <-yield.C:
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			handoffs := make([]int64, 0, b.N)
			for f := 2; f <= b.N; f++ {
				handoffs = append(handoffs, max(acquiredAt[f]-releasedAt[f-1], 0))
			}
			slices.Sort(handoffs)
			pct := func(p float64) float64 {
				if len(handoffs) == 0 {
					return 0
				}
				return float64(handoffs[int(p*float64(len(handoffs)-1))]) / 1e3
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "acq/s")
			b.ReportMetric(pct(0.50), "p50-handoff-µs")
			b.ReportMetric(pct(0.99), "p99-handoff-µs")
			b.ReportMetric(float64(counter.Commands.Load()-cmds)/float64(b.N), "cmds/acq")
		})
	}
}

// scriptUsec returns the Redis server's total time in EVALSHA and EVAL (INFO commandstats), in microseconds.
func scriptUsec(tb testing.TB, rdb *redis.Client) int64 {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total int64
	for _, line := range strings.Split(info, "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_evalsha:")
		if !ok {
			rest, ok = strings.CutPrefix(line, "cmdstat_eval:")
		}
		if !ok {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "usec="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				total += n
			}
		}
	}
	return total
}

// acquireOrSlot takes key's lock on bk, or with limit > 0 a slot of the
// key's limit of size limit.
func acquireOrSlot(ctx context.Context, bk *redisbackend.Backend, key string, limit int, ttl time.Duration) (lock.Lease, error) {
	if limit <= 0 {
		return bk.Acquire(ctx, key, ttl)
	}
	id, err := bk.NewLockID(key)
	if err != nil {
		return lock.Lease{}, err
	}
	return bk.AcquireSlot(ctx, key, id, limit, ttl)
}
