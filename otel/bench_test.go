package otellock_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/benchkit"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// variants are the backends compared in one run: the bare backend, the
// wrapper on the no-op providers, the wrapper on the global providers with
// no SDK installed (what a library user gets by default), and the wrapper
// on a recording SDK (every span sampled and batched to an exporter that
// discards it; metrics aggregated in memory).
func variants(b *testing.B, bare lock.Backend) []struct {
	name    string
	backend lock.Backend
} {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return []struct {
		name    string
		backend lock.Backend
	}{
		{"bare", bare},
		{"noop", otellock.Wrap(bare, otellock.WithTracerProvider(tracenoop.NewTracerProvider()),
			otellock.WithMeterProvider(metricnoop.NewMeterProvider()))},
		{"global", otellock.Wrap(bare)},
		{"sdk", otellock.Wrap(bare, otellock.WithTracerProvider(tp), otellock.WithMeterProvider(mp))},
	}
}

// BenchmarkAcquireRelease measures an Acquire+Release cycle on a private
// redis-server, bare and through the wrapper, in the same run: "serial"
// is the latency of one caller, "parallel" the throughput of 32 callers
// on distinct keys (where the wrapper's CPU cost competes with the client
// and the server for the cores).
func BenchmarkAcquireRelease(b *testing.B) {
	rdb := benchkit.Client(b)
	bare := benchkit.Backend(b, rdb, redisbackend.Options{})
	ctx := context.Background()
	const ttl = 30 * time.Second
	var seq atomic.Int64
	cycle := func(b *testing.B, bk lock.Backend, key string) bool {
		l, err := bk.Acquire(ctx, key, ttl)
		if err != nil {
			b.Error(err)
			return false
		}
		if err := bk.Release(ctx, l.ID); err != nil {
			b.Error(err)
			return false
		}
		return true
	}
	for _, v := range variants(b, bare) {
		b.Run("serial/"+v.name, func(b *testing.B) {
			key := "s" + strconv.FormatInt(seq.Add(1), 10)
			b.ReportAllocs()
			for b.Loop() {
				if !cycle(b, v.backend, key) {
					return
				}
			}
		})
	}
	for _, v := range variants(b, bare) {
		b.Run("parallel/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				key := "p" + strconv.FormatInt(seq.Add(1), 10)
				for pb.Next() {
					if !cycle(b, v.backend, key) {
						return
					}
				}
			})
		})
	}
}

// stub is a Backend that does no I/O, so that BenchmarkWrapper measures
// the wrapper alone.
type stub struct{ lease lock.Lease }

func (s *stub) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	return s.lease, nil
}
func (s *stub) Release(context.Context, string) error { return nil }
func (s *stub) Extend(context.Context, string, time.Duration) (time.Time, error) {
	return s.lease.ExpiresAt, nil
}
func (s *stub) IsLocked(context.Context, string) (bool, error)        { return false, nil }
func (s *stub) LookupKey(context.Context, string) (*lock.Info, error) { return nil, nil }
func (s *stub) LookupID(context.Context, string) (*lock.Info, error)  { return nil, nil }
func (s *stub) Capabilities() lock.Capabilities {
	return lock.Capabilities{Backend: "stub", Fencing: true, TimeAuthority: "server"}
}

// BenchmarkWrapper measures what the wrapper itself adds to an
// Acquire+Release cycle, on a backend that does no I/O: time and
// allocations per cycle.
func BenchmarkWrapper(b *testing.B) {
	bare := &stub{lease: lock.Lease{Key: "k", ID: lockdriver.NewLockID(), Fence: "000000000000001",
		TTL: 30 * time.Second, ExpiresAt: time.Now().Add(time.Hour)}}
	ctx := context.Background()
	for _, v := range variants(b, bare) {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				l, _ := v.backend.Acquire(ctx, "k", 30*time.Second)
				_ = v.backend.Release(ctx, l.ID)
			}
		})
	}
}

// BenchmarkOverhead measures the wrapper's overhead on a real Redis as
// robustly as a shared machine allows: every iteration runs one
// Acquire+Release cycle with each variant, in random order, so that all
// variants see the same load and the same predecessors (the SDK leaves
// work behind for its batch processor and the GC), and it reports the median cycle of each
// (ns/cycle) and the wrapped variants' overhead over the bare backend's
// median (overhead-%).
func BenchmarkOverhead(b *testing.B) {
	rdb := redistest.Start(b).Client(b)
	bare := benchkit.Backend(b, rdb, redisbackend.Options{})
	ctx := context.Background()
	vs := variants(b, bare)
	samples := make([][]time.Duration, len(vs))
	for b.Loop() {
		for _, k := range rand.Perm(len(vs)) {
			began := time.Now()
			l, err := vs[k].backend.Acquire(ctx, "overhead", 30*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			if err := vs[k].backend.Release(ctx, l.ID); err != nil {
				b.Fatal(err)
			}
			samples[k] = append(samples[k], time.Since(began))
		}
	}
	base := median(samples[0])
	for k, v := range vs {
		m := median(samples[k])
		b.ReportMetric(float64(m.Nanoseconds()), v.name+"-ns/cycle")
		if k > 0 {
			b.ReportMetric(100*float64(m-base)/float64(base), v.name+"-overhead-%")
		}
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
