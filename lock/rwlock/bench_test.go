package rwlock_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

// BenchmarkCycle compares an uncontended cycle (acquire, run, release) of
// a reader and of a writer with a plain lock's, on the shared server, a
// new key per cycle. bench/scriptcost measures what the cycles cost Redis
// (docs/readwrite.md has the figures).
func BenchmarkCycle(b *testing.B) {
	for _, c := range []struct {
		name string
		do   func(context.Context, lock.Backend, string, func(context.Context, lock.Lease) error, ...lock.Option) error
	}{{"lock", lock.Do}, {"read", rwlock.Read}, {"write", rwlock.Write}} {
		b.Run(c.name, func(b *testing.B) {
			be := benchBackend(b)
			fn := func(context.Context, lock.Lease) error { return nil }
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if err := c.do(context.Background(), be, "k"+strconv.Itoa(i), fn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriterFairness runs writers on 4 Backends, each on a client of
// its own (4 instances of a fleet, 2 writers each), beside a stream of
// readers, for b.N write cycles in all, and reports Jain's fairness index
// of the writers' grants (1 is perfectly even) and the longest a writer
// waited.
func BenchmarkWriterFairness(b *testing.B) {
	bs := newBackends(b, 4)
	ctx, stop := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	for r := range 2 { // the readers: two streams, each read holding 5 ms
		readers.Add(1)
		go func() {
			defer readers.Done()
			for ctx.Err() == nil {
				_ = rwlock.Read(ctx, bs[r], "hot", func(context.Context, lock.Lease) error {
					time.Sleep(5 * time.Millisecond)
					return nil
				}, lock.WithWait(time.Minute))
			}
		}()
	}
	defer readers.Wait()
	defer stop()
	var left atomic.Int64
	left.Store(int64(b.N))
	counts := make([]int, 8)
	var longest atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				start := time.Now()
				err := rwlock.Write(ctx, bs[w%4], "hot", func(context.Context, lock.Lease) error {
					if d := int64(time.Since(start)); d > longest.Load() {
						longest.Store(d)
					}
					counts[w]++
					return nil
				}, lock.WithWait(time.Minute))
				if err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	var sum, sq float64
	for _, c := range counts {
		sum += float64(c)
		sq += float64(c) * float64(c)
	}
	b.ReportMetric(sum*sum/(float64(len(counts))*sq), "jain")
	b.ReportMetric(float64(longest.Load())/1e6, "max-wait-ms")
}
