package grpclock_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/syncguard-go/syncguard/lock"
	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
)

// TestStreamHoldsLock: a stream holds its key for its life; a second
// stream on the key is refused; the lock is released when the stream
// ends and when the client cancels it.
func TestStreamHoldsLock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	o := &orders{watch: func(ss grpc.ServerStream) error {
		l, ok := lock.LeaseFrom(ss.Context())
		if !ok {
			return status.Error(codes.Internal, "no lease")
		}
		if err := ss.SendMsg(wrapperspb.String(string(l.Fence))); err != nil {
			return err
		}
		for { // echo until the client closes or goes away
			m := new(wrapperspb.StringValue)
			if err := ss.RecvMsg(m); err != nil {
				if err == io.EOF {
					return nil
				}
				return err
			}
		}
	}}
	ic, err := grpclock.StreamServerInterceptor(e.b, grpclock.FromMetadata("x-feed"))
	if err != nil {
		t.Fatal(err)
	}
	conn := serve(t, o, true, []grpc.ServerOption{grpc.StreamInterceptor(ic)})
	key := func() string { return methodWatch + "::feed-1" } // the route, the empty scope, the key
	for _, end := range []string{"close", "cancel"} {
		ctx, cancel := context.WithCancel(testCtx(t))
		s := openWatch(t, ctx, conn)
		if err := s.RecvMsg(new(wrapperspb.StringValue)); err != nil { // the fence: the handler holds the lease
			t.Fatal(err)
		}
		if !locked(t, e, key()) {
			t.Fatalf("%s: the stream's key is not locked while it is open", end)
		}
		other := openWatch(t, testCtx(t), conn)
		if err := other.RecvMsg(new(wrapperspb.StringValue)); status.Code(err) != codes.Aborted {
			t.Errorf("%s: second stream: %v, want ABORTED", end, err)
		}
		if end == "close" {
			_ = s.CloseSend()
			if err := s.RecvMsg(new(wrapperspb.StringValue)); err != io.EOF {
				t.Errorf("close: %v, want io.EOF", err)
			}
		} else {
			cancel()
		}
		waitUnlocked(t, e, key())
		cancel()
	}
}

// openWatch opens a Watch stream on the key feed-1.
func openWatch(t *testing.T, ctx context.Context, conn *grpc.ClientConn) grpc.ClientStream {
	t.Helper()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-feed", "feed-1")
	s, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, methodWatch)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func locked(t *testing.T, e *env, key string) bool {
	t.Helper()
	ctx := testCtx(t)
	ok, err := e.b.IsLocked(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// waitUnlocked waits until key is free; it fails when it stays held.
func waitUnlocked(t *testing.T, e *env, key string) {
	t.Helper()
	ctx := testCtx(t)
	for {
		ok, err := e.b.IsLocked(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%q is still locked", key)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestRetryConfigNamesUnaryMethods: docs/grpc.md's retry service config.
// Named by service, it retries the service's streams too: a second
// stream on a busy key is refused ABORTED only after maxAttempts attempts,
// each after the busy answer's pushback. Naming the unary methods leaves
// streams out: the second stream is refused at its first attempt.
func TestRetryConfigNamesUnaryMethods(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	o := &orders{watch: func(ss grpc.ServerStream) error {
		if err := ss.SendMsg(wrapperspb.String("holding")); err != nil {
			return err
		}
		select {
		case <-hold:
		case <-ss.Context().Done():
		}
		return nil
	}}
	ic, err := grpclock.StreamServerInterceptor(e.b, grpclock.FromMetadata("x-feed"))
	if err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int64
	count := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		attempts.Add(1)
		return h(srv, ss)
	}
	policy := `"retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "2s",
		"backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE", "ABORTED"]}`
	connFor := func(name string) *grpc.ClientConn {
		return serve(t, o, false, []grpc.ServerOption{grpc.ChainStreamInterceptor(count, ic)},
			grpc.WithDefaultServiceConfig(`{"methodConfig": [{"name": [`+name+`], `+policy+`}]}`))
	}
	service := connFor(`{"service": "test.Orders"}`)
	unary := connFor(`{"service": "test.Orders", "method": "Create"}`)

	first := openWatch(t, testCtx(t), service)
	if err := first.RecvMsg(new(wrapperspb.StringValue)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		desc     string
		conn     *grpc.ClientConn
		attempts int64
	}{
		{"named by service", service, 4},
		{"named by unary method", unary, 1},
	} {
		attempts.Store(0)
		start := time.Now()
		err := openWatch(t, testCtx(t), tt.conn).RecvMsg(new(wrapperspb.StringValue))
		t.Logf("%s: %v after %d attempts, %v", tt.desc, status.Code(err), attempts.Load(), time.Since(start).Round(10*time.Millisecond))
		if status.Code(err) != codes.Aborted || attempts.Load() != tt.attempts {
			t.Errorf("%s: second stream: %v after %d attempts, want ABORTED after %d", tt.desc, err, attempts.Load(), tt.attempts)
		}
	}
}
