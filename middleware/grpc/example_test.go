package grpclock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// A call sent twice with one idempotency key runs once; the second gets
// the first's response, marked idempotent-replayed.
func ExampleUnaryServerInterceptor() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	// A key per call: striped fence counters keep Redis bounded.
	backend, err := redisbackend.New(rdb, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		panic(err)
	}
	idempotent, err := grpclock.UnaryServerInterceptor(backend,
		grpclock.FromIdempotencyKey(),
		grpclock.Unscoped(), // a public method; otherwise grpclock.WithScope
		grpclock.WithReplay(time.Hour))
	if err != nil {
		panic(err)
	}
	o := &orders{}
	conn, stop, err := listen(o, false, []grpc.ServerOption{grpc.UnaryInterceptor(idempotent)}) // a grpc.Server on bufconn
	if err != nil {
		panic(err)
	}
	defer stop()
	for range 2 {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "idempotency-key", "order-7")
		var resp wrapperspb.StringValue
		var header metadata.MD
		if err := conn.Invoke(ctx, methodCreate, wrapperspb.String("pencils"), &resp, grpc.Header(&header)); err != nil {
			panic(err)
		}
		fmt.Println(resp.GetValue(), header.Get(grpclock.MetadataReplayed))
	}
	fmt.Println("runs:", o.runs.Load())
	// Output:
	// order 1: pencils []
	// order 1: pencils [true]
	// runs: 1
}
