package asynqlock_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// BenchmarkWrap measures the per-task overhead of the Guard: the wrapped
// handler is called directly, as asynq's processor would, against the bare
// handler, on a private redis-server in the same run. The difference is
// the lock's round trips (acquire and release; with a done TTL also the
// done check) plus the heartbeat's set-up.
//
// guard+traced records a CONSUMER span per delivery on an SDK provider
// that exports nothing; guard runs with no TracerProvider set.
//
// serial/* is the latency added to one task; parallel/* runs 16 workers
// per CPU on keys of their own, like a busy asynq server, so its ns/op is
// the inverse of the throughput.
func BenchmarkWrap(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b, func(o *redis.Options) { o.PoolSize = 64 })
	backend, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	bare := asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })
	guard := func(opts ...asynqlock.Option) asynq.Handler {
		g, err := asynqlock.New(backend, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return g.Wrap(bare)
	}
	tests := []struct {
		desc string
		h    asynq.Handler
	}{
		{"bare", bare},
		{"guard", guard()},
		{"guard+done", guard(asynqlock.WithDoneTTL(time.Second))},
		// A span per delivery, recorded and dropped: the tracing's own cost.
		{"guard+traced", guard(asynqlock.WithTracerProvider(sdktrace.NewTracerProvider()))},
	}
	ctx := context.Background()
	var seq atomic.Int64
	// Every task gets a payload of its own, so that done markers never drop
	// the next one and parallel workers never contend.
	next := func() *asynq.Task {
		return asynq.NewTask("report:build", strconv.AppendInt(nil, seq.Add(1), 10))
	}
	for _, tt := range tests {
		b.Run("serial/"+tt.desc, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := tt.h.ProcessTask(ctx, next()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, tt := range tests {
		b.Run("parallel/"+tt.desc, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := tt.h.ProcessTask(ctx, next()); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
