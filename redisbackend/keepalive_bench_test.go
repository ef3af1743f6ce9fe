package redisbackend_test

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

var keepaliveLeases = flag.Int("keepalive.leases", 10000, "leases held by BenchmarkKeepAlive (1000 with -short)")

// BenchmarkKeepAlive holds N leases (default 10,000; -keepalive.leases,
// or 1,000 with -short) with TTL 30s, kept alive by lock.Keep on one
// Backend, for the benchmark's duration, and reports what keep-alive
// costs: Redis round trips per second (single commands plus pipeline
// executions, counted by a client hook), extensions per second, and the
// goroutines it adds. b.N counts 100ms slices of holding, so -benchtime
// sets the hold time (e.g. -benchtime=300x holds for 30s). The goal for
// 10,000 leases is at most 20 round trips/s and 100 goroutines.
func BenchmarkKeepAlive(b *testing.B) {
	n := *keepaliveLeases
	if testing.Short() {
		n = min(n, 1000)
	}
	const ttl = 30 * time.Second
	ctx := context.Background()
	srv := redistest.Start(b)
	rdb := srv.Client(b, func(o *redis.Options) { o.PoolSize = 16 })
	h := redistest.Count(rdb)
	bk, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "keepalive"})
	if err != nil {
		b.Fatal(err)
	}
	leases := make([]lock.Lease, n)
	for i := range leases {
		if leases[i], err = bk.Acquire(ctx, fmt.Sprint("k", i), ttl); err != nil {
			b.Fatal(err)
		}
	}
	baseline := runtime.NumGoroutine()
	var exts atomic.Int64
	helds := make([]context.Context, n)
	stops := make([]func() error, n)
	for i, l := range leases {
		helds[i], stops[i] = lock.Keep(ctx, bk, l, lock.WithHeartbeat(lock.Heartbeat{OnExtend: func(time.Time) { exts.Add(1) }}))
	}
	defer func() {
		for _, stop := range stops {
			_ = stop()
		}
	}()
	trips, cmds, ext0 := h.RoundTrips.Load(), h.Commands.Load(), exts.Load()
	maxG := 0
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		time.Sleep(100 * time.Millisecond)
		maxG = max(maxG, runtime.NumGoroutine()-baseline)
	}
	el := time.Since(start).Seconds()
	b.StopTimer()
	lost := 0
	for _, held := range helds {
		if held.Err() != nil {
			lost++
		}
	}
	if lost > 0 {
		b.Errorf("%d of %d leases lost", lost, n)
	}
	b.ReportMetric(float64(n), "leases")
	b.ReportMetric(float64(h.RoundTrips.Load()-trips)/el, "roundtrips/s")
	b.ReportMetric(float64(h.Commands.Load()-cmds)/el, "cmds/s")
	b.ReportMetric(float64(exts.Load()-ext0)/el, "extends/s")
	b.ReportMetric(float64(maxG), "goroutines")
	b.ReportMetric(el, "held-s")
}
