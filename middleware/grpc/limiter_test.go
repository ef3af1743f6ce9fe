package grpclock_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
)

// TestLimiter: behind go-grpc-middleware's ratelimit interceptor, two
// calls per tenant start per window, on two servers sharing Redis; the
// third is RESOURCE_EXHAUSTED with a pushback until a slot frees.
func TestLimiter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var conns []*grpc.ClientConn
	for range 2 {
		l, err := grpclock.NewLimiter(e.b,
			grpclock.FromMetadata("x-tenant"),
			grpclock.WithLimit(2), grpclock.WithTTL(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, serve(t, &orders{}, false, []grpc.ServerOption{grpc.UnaryInterceptor(ratelimit.UnaryServerInterceptor(l))}))
	}
	ctx := testCtx(t)
	for i, conn := range conns {
		if r := call(ctx, conn, "a", "x-tenant", "acme"); r.err != nil {
			t.Fatalf("call %d: %v", i, r.err)
		}
	}
	r := call(ctx, conns[0], "a", "x-tenant", "acme")
	ms, _ := strconv.Atoi(first(r.trailer.Get(grpclock.PushbackKey)))
	if status.Code(r.err) != codes.ResourceExhausted || ms <= 0 || ms > 60000 {
		t.Errorf("third call: %v, pushback %d ms; want RESOURCE_EXHAUSTED and a pushback within the window", r.err, ms)
	}
	if r := call(ctx, conns[1], "a", "x-tenant", "globex"); r.err != nil {
		t.Errorf("another tenant: %v", r.err)
	}
}

func first(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// limiterServer serves a Limiter of limit calls per window behind
// ratelimit's interceptor, counting the attempts that reach it, and
// returns a client connection with dial options extra.
func limiterServer(t *testing.T, e *env, limit int, window time.Duration, attempts *atomic.Int64, extra ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	l, err := grpclock.NewLimiter(e.b,
		grpclock.FromMetadata("x-tenant"),
		grpclock.WithLimit(limit), grpclock.WithTTL(window))
	if err != nil {
		t.Fatal(err)
	}
	count := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		attempts.Add(1)
		return h(ctx, req)
	}
	return serve(t, &orders{}, false, []grpc.ServerOption{grpc.ChainUnaryInterceptor(count, ratelimit.UnaryServerInterceptor(l))}, extra...)
}

// retryExhausted is a service config whose calls grpc-go tries twice when
// the first is RESOURCE_EXHAUSTED, the second after the server's pushback.
const retryExhausted = `{"methodConfig": [{"name": [{"service": "test.Orders"}],
	"retryPolicy": {"maxAttempts": 2, "initialBackoff": "0.01s", "maxBackoff": "0.01s",
		"backoffMultiplier": 1, "retryableStatusCodes": ["RESOURCE_EXHAUSTED"]}}]}`

// TestLimiterPushbackIsTrue: 3 calls per 3 s window, started at +0, +0.5 s
// and +1 s. A fourth is refused with a pushback for when the first slot
// frees, and a call sent at the pushback is admitted; so is grpc-go's
// retry at the pushback of the next refusal. (A slot live for the time
// tolerance past its window would refuse both for another second.)
func TestLimiterPushbackIsTrue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var attempts atomic.Int64
	conn := limiterServer(t, e, 3, 3*time.Second, &attempts)
	retrying := limiterServer(t, e, 3, 3*time.Second, &attempts, grpc.WithDefaultServiceConfig(retryExhausted))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	start := time.Now()
	for i := range 3 {
		time.Sleep(time.Until(start.Add(time.Duration(i) * 500 * time.Millisecond)))
		if r := call(ctx, conn, "a", "x-tenant", "acme"); r.err != nil {
			t.Fatalf("call %d: %v", i, r.err)
		}
	}
	r := call(ctx, conn, "a", "x-tenant", "acme")
	refused := time.Now()
	ms, _ := strconv.Atoi(first(r.trailer.Get(grpclock.PushbackKey)))
	if status.Code(r.err) != codes.ResourceExhausted || ms <= 0 || ms > 3000 {
		t.Fatalf("fourth call: %v, pushback %d ms; want RESOURCE_EXHAUSTED and a pushback within the window", r.err, ms)
	}
	time.Sleep(time.Until(refused.Add(time.Duration(ms) * time.Millisecond)))
	if r := call(ctx, conn, "a", "x-tenant", "acme"); r.err != nil {
		t.Fatalf("a call at the pushback (%d ms, %v after the first call): %v", ms, time.Since(start), r.err)
	}

	// The slots now end at +3.5 s, +4 s and +6 s: the next call is refused
	// once, with a pushback to +3.5 s, and grpc-go's retry then is admitted.
	attempts.Store(0)
	if r := call(ctx, retrying, "a", "x-tenant", "acme"); r.err != nil || attempts.Load() != 2 {
		t.Fatalf("a call retried at the pushback: %v after %d attempts, want admitted on the second", r.err, attempts.Load())
	}
}

// TestLimiterSteadyRate: one call every 150 ms at 5 calls per 1 s window.
// Each slot ends a window after its call started, so of 20 calls (at +0
// to +2.85 s) 15 start: 5 at +0 to +0.6 s, 5 at +1.05 to +1.65 s, 5 at
// +2.1 to +2.7 s. Windows a second longer would let at most 10 start.
func TestLimiterSteadyRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var attempts atomic.Int64
	conn := limiterServer(t, e, 5, time.Second, &attempts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	admitted := 0
	for i := range 20 {
		time.Sleep(time.Until(start.Add(time.Duration(i) * 150 * time.Millisecond)))
		r := call(ctx, conn, "a", "x-tenant", "acme")
		switch status.Code(r.err) {
		case codes.OK:
			admitted++
		case codes.ResourceExhausted:
		default:
			t.Fatalf("call %d: %v", i, r.err)
		}
	}
	t.Logf("%d of 20 calls started", admitted)
	if admitted < 13 {
		t.Errorf("%d of 20 calls started in %v, want 15 (at least 13)", admitted, time.Since(start))
	}
}
