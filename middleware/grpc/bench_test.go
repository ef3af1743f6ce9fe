package grpclock_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
)

// BenchmarkInterceptor is the cost of a unary call over bufconn: the bare
// server, the lock (a fresh key per call), replay's first run (a fresh
// idempotency key per call) and a replayed call (each goroutine's own
// key), from 16 goroutines per core, on the shared Redis.
func BenchmarkInterceptor(b *testing.B) {
	e := newEnv(b)
	build := func(opts ...grpclock.Option) []grpc.ServerOption {
		ic, err := grpclock.UnaryServerInterceptor(e.b, grpclock.FromIdempotencyKey(), append([]grpclock.Option{
			grpclock.WithScope(user)}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		return []grpc.ServerOption{grpc.UnaryInterceptor(ic)}
	}
	var seq atomic.Int64
	fresh := func(string) string { return "k" + strconv.FormatInt(seq.Add(1), 10) }
	same := func(own string) string { return own }
	replay := grpclock.WithReplay(time.Hour)
	b.Run("bare", func(b *testing.B) { benchCalls(b, serve(b, &orders{}, false, nil), fresh) })
	b.Run("lock", func(b *testing.B) { benchCalls(b, serve(b, &orders{}, false, build()), fresh) })
	b.Run("replay-first", func(b *testing.B) { benchCalls(b, serve(b, &orders{}, false, build(replay)), fresh) })
	b.Run("replayed", func(b *testing.B) { benchCalls(b, serve(b, &orders{}, false, build(replay)), same) })
}

// benchCalls calls Create from parallel goroutines, each with the key
// next gives for its own key; every call must succeed.
func benchCalls(b *testing.B, conn *grpc.ClientConn, next func(own string) string) {
	b.ReportAllocs()
	b.SetParallelism(16)
	var seq atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		own := "own-" + strconv.FormatInt(seq.Add(1), 10)
		for pb.Next() {
			ctx := metadata.AppendToOutgoingContext(context.Background(), "idempotency-key", next(own), "x-user-bin", "ann")
			var resp wrapperspb.StringValue
			if err := conn.Invoke(ctx, methodCreate, wrapperspb.String("pencils"), &resp); err != nil {
				b.Errorf("call: %v", err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
