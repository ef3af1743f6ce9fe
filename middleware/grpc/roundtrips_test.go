package grpclock_test

import (
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"google.golang.org/grpc"

	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
)

// TestRoundTrips counts the round trips to Redis of one call in each mode
// with a go-redis hook (a pipeline counts as one): a lock cycle is 2
// (acquire, release); a replay's first run 2 (acquire or answer with the
// record, store the record and release); a replay of a stored response 1;
// a slot of a concurrency limit 2 (take, free); the Limiter 1 (take; the
// slot ends with its window). A unary call's response is sent after the
// interceptor returns, so every round trip is counted when the call
// returns.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	server := func(ic grpc.UnaryServerInterceptor, err error) *grpc.ClientConn {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return serve(t, &orders{}, false, []grpc.ServerOption{grpc.UnaryInterceptor(ic)})
	}
	plain := server(grpclock.UnaryServerInterceptor(e.b, grpclock.FromMetadata("x-order-id")))
	replay := server(grpclock.UnaryServerInterceptor(e.b,
		grpclock.FromIdempotencyKey(),
		grpclock.WithScope(user), grpclock.WithReplay(time.Minute)))
	limited := server(grpclock.UnaryServerInterceptor(e.b, grpclock.FromMetadata("x-tenant"), grpclock.WithLimit(2)))
	lim, err := grpclock.NewLimiter(e.b,
		grpclock.FromMetadata("x-tenant"),
		grpclock.WithLimit(1000), grpclock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	rated := serve(t, &orders{}, false, []grpc.ServerOption{grpc.UnaryInterceptor(ratelimit.UnaryServerInterceptor(lim))})
	steps := []struct {
		desc string
		conn *grpc.ClientConn
		md   string
		want int64
	}{
		{"lock only", plain, "x-order-id", 2},
		{"replay, first run", replay, "idempotency-key", 2},
		{"replay, stored response", replay, "idempotency-key", 1},
		{"concurrency limit", limited, "x-tenant", 2},
		{"rate limit (Limiter)", rated, "x-tenant", 1},
	}
	ctx := testCtx(t)
	// A first pass on keys of its own loads the scripts (a script's first
	// call may be answered NOSCRIPT and sent again).
	for pass, k := range []string{"warm-up", "k1"} {
		for _, s := range steps {
			before := e.cmds.RoundTrips.Load()
			r := call(ctx, s.conn, "pencils", s.md, k, "x-user-bin", "ann")
			got := e.cmds.RoundTrips.Load() - before
			if r.err != nil {
				t.Errorf("%s (key %q): %v", s.desc, k, r.err)
			}
			if pass == 1 && got != s.want {
				t.Errorf("%s: %d round trips, want %d", s.desc, got, s.want)
			}
		}
	}
}
