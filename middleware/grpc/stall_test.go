package grpclock_test

import (
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestStalledRedisUnavailable: with docs/grpc.md's idempotent settings
// (replay, a 5s wait) on a striped backend with default go-redis options, a call
// on a SIGSTOPped Redis is refused UNAVAILABLE with a RetryInfo and the
// pushback trailer within the backend timeout (1s, plus slack), not after
// go-redis's timeouts and retries.
func TestStalledRedisUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	backend, err := redisbackend.New(srv.Client(t), &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = backend.Close() })
	ic, err := grpclock.UnaryServerInterceptor(backend,
		grpclock.FromIdempotencyKey(),
		grpclock.WithScope(user),
		grpclock.WithReplay(24*time.Hour),
		grpclock.WithWait(5*time.Second),
	)
	if err != nil {
		t.Fatal(err)
	}
	conn := serve(t, &orders{}, false, []grpc.ServerOption{grpc.UnaryInterceptor(ic)})
	ctx := testCtx(t)
	if r := call(ctx, conn, "pencils", "idempotency-key", "warm", "x-user-bin", "alice"); r.err != nil {
		t.Fatalf("warm-up call: %v", r.err)
	}
	srv.Pause(t)
	defer srv.Resume(t)
	start := time.Now()
	r := call(ctx, conn, "pencils", "idempotency-key", "k1", "x-user-bin", "alice")
	took := time.Since(start)
	st := status.Convert(r.err)
	t.Logf("%v after %v", r.err, took)
	if st.Code() != codes.Unavailable || retryDelay(st) <= 0 || len(r.trailer.Get(grpclock.PushbackKey)) != 1 {
		t.Errorf("call on a stalled Redis: %v, trailer %v; want UNAVAILABLE with a RetryInfo and a pushback", r.err, r.trailer)
	}
	if bound := guard.DefaultBackendTimeout + 1500*time.Millisecond; took > bound {
		t.Errorf("call on a stalled Redis answered after %v, want within %v", took, bound)
	}
}
