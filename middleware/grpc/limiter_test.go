package grpclock_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
)

// TestLimiter: behind go-grpc-middleware's ratelimit interceptor, two
// calls per tenant start per window, on two servers sharing Redis; the
// third is RESOURCE_EXHAUSTED with a pushback until a slot frees.
func TestLimiter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var conns []*grpc.ClientConn
	for range 2 {
		l, err := grpclock.NewLimiter(e.b, grpclock.WithKeyFunc(grpclock.FromMetadata("x-tenant")),
			httpguard.WithLimit(2), httpguard.WithTTL(time.Minute))
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
