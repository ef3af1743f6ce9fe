package redisbackend_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// usedMemory reads INFO memory's used_memory.
func usedMemory(tb testing.TB, rdb *redis.Client) int64 {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "memory").Result()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return n
		}
	}
	tb.Fatal("no used_memory in INFO memory")
	return 0
}

// fenceLayouts are the fence counter settings the memory benchmarks
// compare.
var fenceLayouts = []struct {
	name    string
	stripes int
}{{"per-key", 0}, {"striped-1024", redisbackend.DefaultFenceStripes}}

// BenchmarkDistinctKeysMemory acquires and releases b.N distinct keys (16
// goroutines) on a private redis-server, with one fence counter per key
// and with 1,024 stripes, and reports the Redis keys and used_memory left
// afterwards, once the release tombstones (a 1 s resend window here) have
// expired, and the cycles per second. Run it with -benchtime 1000000x for
// the README's table:
//
//	go test -run '^$' -bench DistinctKeysMemory -benchtime 1000000x ./redisbackend/
func BenchmarkDistinctKeysMemory(b *testing.B) {
	for _, tc := range fenceLayouts {
		b.Run(tc.name, func(b *testing.B) {
			srv := redistest.Start(b)
			rdb := srv.Client(b, func(o *redis.Options) { o.PoolSize = 32 })
			bk, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "mem", FenceStripes: tc.stripes, ResendWindow: time.Second})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			before := usedMemory(b, rdb)
			var seq atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(8)
			start := time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l, err := bk.Acquire(ctx, "idem:"+strconv.FormatInt(seq.Add(1), 10), 30*time.Second)
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
			b.StopTimer()
			elapsed := time.Since(start)
			// Let the tombstones expire, then touch every key (SCAN expires
			// what it meets) so DBSIZE counts only what stays.
			time.Sleep(1500 * time.Millisecond)
			countKeys(b, rdb, "*")
			keys, err := rdb.DBSize(ctx).Result()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cycles/s")
			b.ReportMetric(float64(keys), "keys")
			b.ReportMetric(float64(usedMemory(b, rdb)-before), "B-used_memory")
		})
	}
}

// BenchmarkHeldLeaseMemory holds b.N leases on distinct keys at once and
// reports the Redis memory per held lease (lock, index and, per key, fence
// keys), with per-key and with striped fence counters.
func BenchmarkHeldLeaseMemory(b *testing.B) {
	for _, tc := range fenceLayouts {
		b.Run(tc.name, func(b *testing.B) {
			srv := redistest.Start(b)
			rdb := srv.Client(b)
			bk, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "mem", FenceStripes: tc.stripes})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			before := usedMemory(b, rdb)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := bk.Acquire(ctx, "idem:"+strconv.Itoa(i), time.Hour); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(usedMemory(b, rdb)-before)/float64(b.N), "B/lease")
		})
	}
}
