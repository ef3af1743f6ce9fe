package redisbackend_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/multilock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/benchkit"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// BenchmarkMultiDo measures cycles of multilock.Do on N keys of one hash
// tag beside lock.Do on one key, from one goroutine, on one private
// server: Redis's time per cycle (INFO commandstats, EVALSHA and EVAL) and
// the client's round trips per cycle.
func BenchmarkMultiDo(b *testing.B) {
	rdb := benchkit.Client(b)
	counter := &redistest.Counter{}
	rdb.AddHook(counter)
	bk := benchkit.Backend(b, rdb, redisbackend.Options{})
	ctx := context.Background()
	var seq atomic.Int64
	run := func(b *testing.B, cycle func(base string) error) {
		b.ReportAllocs()
		usec, trips := scriptUsec(b, rdb), counter.RoundTrips.Load()
		b.Cleanup(func() {
			b.ReportMetric(float64(scriptUsec(b, rdb)-usec)/float64(b.N), "redis-µs/cycle")
			b.ReportMetric(float64(counter.RoundTrips.Load()-trips)/float64(b.N), "trips/cycle")
		})
		base := "{m" + strconv.FormatInt(seq.Add(1), 10) + "}:"
		for b.Loop() {
			if err := cycle(base); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("lock.Do", func(b *testing.B) {
		noop := func(context.Context, lock.Lease) error { return nil }
		run(b, func(base string) error { return lock.Do(ctx, bk, base+"0", noop) })
	})
	for _, n := range []int{1, 2, 8, multilock.MaxKeys} {
		b.Run(fmt.Sprintf("multilock.Do/keys=%d", n), func(b *testing.B) {
			noop := func(context.Context, []lock.Lease) error { return nil }
			run(b, func(base string) error {
				keys := make([]string, n)
				for i := range keys {
					keys[i] = base + strconv.Itoa(i)
				}
				return multilock.Do(ctx, bk, keys, noop)
			})
		})
	}
}
