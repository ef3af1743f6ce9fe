package redisbackend_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/redistest"
)

// countingConn counts the bytes its client reads.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.Add(int64(k))
	return k, err
}

func countingDial(n *atomic.Int64) func(redis.DialHook) redis.DialHook {
	return func(next redis.DialHook) redis.DialHook {
		return func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := next(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: c, n: n}, nil
		}
	}
}

// TestReleaseReachesOnlyItsWaiters: in a fleet, instances that waited
// before (so they have a release subscription) but wait on nothing now
// receive nothing when another instance releases 200 keys: a release costs
// a message only for the instances that wait on that key. An instance that
// does wait on a key is still woken by its release.
func TestReleaseReachesOnlyItsWaiters(t *testing.T) {
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	active := newBackend(t, srv.Client(t), prefix)
	const idle = 4
	reads := make([]*atomic.Int64, idle)
	var waiting interface {
		WatchKey(string) (<-chan struct{}, func())
	}
	for i := range idle {
		reads[i] = new(atomic.Int64)
		rdb := srv.Client(t)
		rdb.AddHook(dialOnly{countingDial(reads[i])})
		b := newBackend(t, rdb, prefix)
		t.Cleanup(func() { _ = b.Close() })
		// It waited once, on a key of its own: its subscription is open.
		ch, cancel := b.WatchKey("mine" + strconv.Itoa(i))
		select {
		case <-ch: // the subscription's confirmation
		case <-time.After(5 * time.Second):
			t.Fatal("no subscription confirmation")
		}
		cancel()
		waiting = b
	}
	// (Their subscriptions, to their own keys' channels, may still be open:
	// the releases below are of other keys.)
	before := make([]int64, idle)
	for i := range reads {
		before[i] = reads[i].Load()
	}
	ctx := context.Background()
	for i := 0; i < 200; i++ {
		l, err := active.Acquire(ctx, "k"+strconv.Itoa(i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := active.Release(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(200 * time.Millisecond) // let any message arrive
	for i := range reads {
		// A pub/sub health-check reply is a few bytes; 200 release
		// messages would be over 10 KB.
		if got := reads[i].Load() - before[i]; got > 200 {
			t.Errorf("idle instance %d read %d bytes during 200 releases of keys it does not wait on, want none", i, got)
		}
	}

	// An instance that waits on a key is woken by its release.
	l, err := active.Acquire(ctx, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ch, cancel := waiting.WatchKey("w")
	defer cancel()
	select {
	case <-ch: // the confirmation of w's subscription
	case <-time.After(5 * time.Second):
		t.Fatal("no subscription confirmation for w")
	}
	cancel()
	ch, cancel = waiting.WatchKey("w")
	defer cancel()
	if err := active.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("the release of w did not wake its waiter")
	}
}
