package grpclock_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/acltest"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestPermissionDeniedIsInternal: a backend whose Redis user may not run
// a command the lock's scripts call fails the call INTERNAL (a server
// misconfiguration), not UNAVAILABLE (which a retry policy resends), after
// one attempt, and the handler does not run.
func TestPermissionDeniedIsInternal(t *testing.T) {
	srv := redistest.Start(t)
	rule := acltest.Rule(t, acltest.App)
	args := []any{"acl", "setuser", "sg-no-time"}
	for _, w := range append(rule, "-time") {
		args = append(args, w)
	}
	if err := srv.Client(t).Do(context.Background(), args...).Err(); err != nil {
		t.Fatal(err)
	}
	warmScripts(t, srv)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Username: "sg-no-time", Password: acltest.Password(t, rule)})
	t.Cleanup(func() { _ = rdb.Close() })
	cmds := redistest.Count(rdb)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: acltest.Prefix, DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	ic, err := grpclock.UnaryServerInterceptor(b, grpclock.FromMetadata("x-order-id"))
	if err != nil {
		t.Fatal(err)
	}
	o := &orders{}
	conn := serve(t, o, false, []grpc.ServerOption{grpc.UnaryInterceptor(ic)})
	r := call(testCtx(t), conn, "a", "x-order-id", "42")
	if st := status.Convert(r.err); st.Code() != codes.Internal || reason(st) != "LOCK_MISCONFIGURED" {
		t.Errorf("call: %v, want INTERNAL LOCK_MISCONFIGURED", r.err)
	}
	if n := cmds.Scripts.Load(); n != 1 || o.runs.Load() != 0 {
		t.Errorf("%d scripts sent and %d runs, want 1 and none", n, o.runs.Load())
	}
}

// warmScripts has the server load the lock's scripts (as the default
// user), so that one attempt is one EVALSHA.
func warmScripts(t *testing.T, srv *redistest.Server) {
	t.Helper()
	b, err := redisbackend.New(srv.Client(t), &redisbackend.Options{Prefix: "warm", DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.Acquire(context.Background(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(context.Background(), l.ID); err != nil {
		t.Fatal(err)
	}
}
