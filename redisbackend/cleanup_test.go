package redisbackend_test

import (
	"context"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// outage is a go-redis hook for an acquisition whose reply is lost and a
// server that then stays unreachable: the first script command runs but
// its caller gets a reset connection, and the next down script commands
// get one without being sent. It stands outside go-redis's own retries
// (a process hook wraps them), as a stall longer than they last does.
type outage struct {
	lose   atomic.Bool  // lose the reply of the next script command
	down   atomic.Int32 // script commands still to fail after that
	failed atomic.Int32 // script commands failed unsent
}

func (o *outage) DialHook(next redis.DialHook) redis.DialHook { return next }

func (o *outage) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (o *outage) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		name := strings.ToLower(cmd.Name())
		if name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
		switch {
		case o.lose.CompareAndSwap(true, false):
			_ = next(ctx, cmd)
		case o.down.Load() > 0:
			o.down.Add(-1)
			o.failed.Add(1)
		default:
			return next(ctx, cmd)
		}
		cmd.SetErr(reset)
		return reset
	}
}

// TestAbandonedAcquisitionReleasedAfterOutage: an Acquire whose reply was
// lost after it took the lock returns the error, and the Backend releases
// the id in the background; the server stays unreachable for that
// release's first 3 tries, and it is tried again until it gets through
// (it was one call: the lock stayed until its TTL).
func TestAbandonedAcquisitionReleasedAfterOutage(t *testing.T) {
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	rdb := srv.Client(t)
	o := &outage{}
	rdb.AddHook(o)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := b.Acquire(ctx, "warm", time.Second); err != nil { // loads the script
		t.Fatal(err)
	}
	o.lose.Store(true)
	o.down.Store(3)
	_, err = b.Acquire(ctx, "k", time.Minute)
	if c := lock.CodeOf(err); c != lock.CodeServiceUnavailable && c != lock.CodeNetworkTimeout {
		t.Fatalf("Acquire = %v, want the lost reply's error", err)
	}
	raw := srv.Client(t)
	if n, err := raw.Exists(ctx, prefix+":k").Result(); err != nil || n != 1 {
		t.Fatalf("EXISTS k = %d, %v: the lost acquisition should have taken the lock", n, err)
	}
	waitFor(t, 5*time.Second, func() string {
		if n, err := raw.Exists(ctx, prefix+":k").Result(); err != nil || n != 0 {
			return "k still locked after the outage: the abandoned acquisition was not released"
		}
		return ""
	})
	if n := o.failed.Load(); n != 3 {
		t.Errorf("%d release tries failed unsent, want 3", n)
	}
}
