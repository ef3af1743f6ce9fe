package grpclock_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/syncguard-go/syncguard/lock"
	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
)

// holdServer serves a Create that reports its lease on leases and holds
// the key until release is closed, behind an interceptor with key and opts.
func holdServer(t *testing.T, e *env, o *orders, leases chan<- lock.Lease, release <-chan struct{}, key grpclock.KeyFunc, opts ...grpclock.Option) *grpc.ClientConn {
	t.Helper()
	ic, err := grpclock.UnaryServerInterceptor(e.b, key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	o.create = func(ctx context.Context, req *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
		l, ok := lock.LeaseFrom(ctx)
		if !ok {
			return nil, status.Error(codes.Internal, "no lease in the handler's context")
		}
		leases <- l
		<-release
		return wrapperspb.String(string(l.Fence)), nil
	}
	return serve(t, o, false, []grpc.ServerOption{grpc.UnaryInterceptor(ic)})
}

// TestUnaryLock: the handler holds a fenced lease; a call on the busy key
// is refused ABORTED with a retry delay (RetryInfo and the pushback
// trailer); another key runs.
func TestUnaryLock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := &orders{}
	leases, release := make(chan lock.Lease, 3), make(chan struct{})
	conn := holdServer(t, e, o, leases, release, grpclock.FromMetadata("x-order-id"))
	ctx := testCtx(t)
	var wg sync.WaitGroup
	var first result
	wg.Go(func() { first = call(ctx, conn, "a", "x-order-id", "42") })
	l := <-leases
	busy := call(ctx, conn, "a", "x-order-id", "42")
	st := status.Convert(busy.err)
	if st.Code() != codes.Aborted || reason(st) != "LOCK_BUSY" || retryDelay(st) <= 0 || len(busy.trailer.Get(grpclock.PushbackKey)) != 1 {
		t.Errorf("busy key: %v, trailer %v; want ABORTED, LOCK_BUSY, a RetryInfo and a pushback", busy.err, busy.trailer)
	}
	wg.Go(func() { _ = call(ctx, conn, "a", "x-order-id", "43") })
	<-leases // another key runs while 42 is held
	close(release)
	wg.Wait()
	if first.err != nil || len(l.Fence) != 15 {
		t.Errorf("first call: %v, fence %q", first.err, l.Fence)
	}
}

func retryDelay(st *status.Status) int64 {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration().Milliseconds()
		}
	}
	return 0
}

// TestUnaryLimit: with WithLimit(2) two calls on a key run at once; the
// third is refused RESOURCE_EXHAUSTED with a retry delay.
func TestUnaryLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := &orders{}
	leases, release := make(chan lock.Lease, 2), make(chan struct{})
	conn := holdServer(t, e, o, leases, release, grpclock.FromMetadata("x-tenant"), grpclock.WithLimit(2))
	ctx := testCtx(t)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if r := call(ctx, conn, "a", "x-tenant", "acme"); r.err != nil {
				t.Errorf("call in the limit: %v", r.err)
			}
		})
	}
	<-leases
	<-leases
	r := call(ctx, conn, "a", "x-tenant", "acme")
	if st := status.Convert(r.err); st.Code() != codes.ResourceExhausted || reason(st) != "CONCURRENCY_LIMIT_REACHED" || retryDelay(st) <= 0 {
		t.Errorf("third call: %v, want RESOURCE_EXHAUSTED with a RetryInfo", r.err)
	}
	close(release)
	wg.Wait()
}

// TestKeyErrorAtRunTime: a key function that fails, or returns "", is
// answered INVALID_ARGUMENT, and nothing reaches Redis.
func TestKeyErrorAtRunTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := &orders{}
	failing := func(_ context.Context, req any) (string, error) {
		if req.(*wrapperspb.StringValue).GetValue() == "fail" {
			return "", errors.New("no order id in the request")
		}
		return "", nil
	}
	ic, err := grpclock.UnaryServerInterceptor(e.b, failing)
	if err != nil {
		t.Fatal(err)
	}
	conn := serve(t, o, false, []grpc.ServerOption{grpc.UnaryInterceptor(ic)})
	before := e.cmds.Commands.Load()
	for _, v := range []string{"fail", "empty"} {
		r := call(testCtx(t), conn, v)
		if st := status.Convert(r.err); st.Code() != codes.InvalidArgument || reason(st) != "INVALID_LOCK_KEY" {
			t.Errorf("%s: %v, want INVALID_ARGUMENT INVALID_LOCK_KEY", v, r.err)
		}
	}
	if n := e.cmds.Commands.Load() - before; n != 0 || o.runs.Load() != 0 {
		t.Errorf("%d Redis commands and %d runs, want none", n, o.runs.Load())
	}
	r := call(testCtx(t), conn, "x", "idempotency-key", "k")
	if r.err == nil {
		t.Error("an empty key ran")
	}
}
