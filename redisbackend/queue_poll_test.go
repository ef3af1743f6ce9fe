package redisbackend

import (
	"context"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestQueuedWaiterDoesNotPoll: a waiter in the key's queue, with the short
// retry delays the HTTP middleware uses (10 ms doubling to 50 ms), makes
// one attempt (which queues it) and then waits for its hand-off: at most
// 2 acquire scripts for the hand-off it receives, where polling on the
// backoff schedule made about 13 in the 400 ms the holder kept the key.
func TestQueuedWaiterDoesNotPoll(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	holder := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix})
	counter := &redistest.Counter{}
	wc := srv.Client(t)
	wc.AddHook(counter)
	waiter := newQueueBackend(t, wc, Options{Prefix: prefix})
	ctx := context.Background()

	l, err := holder.Acquire(ctx, "hot", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		lease lock.Lease
		err   error
	}
	res := make(chan result, 1)
	go func() {
		g, err := lock.Acquire(ctx, waiter, "hot", lock.WithWait(5*time.Second),
			lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}))
		res <- result{g, err}
	}()
	time.Sleep(400 * time.Millisecond) // the holder's work
	if err := holder.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		t.Fatalf("waiter: %v", r.err)
	}
	if n := counter.Scripts.Load(); n > 2 {
		t.Errorf("the waiter ran %d scripts for one hand-off, want at most 2", n)
	}
	if err := waiter.Release(ctx, r.lease.ID); err != nil {
		t.Fatal(err)
	}
}

// TestQueuedWaiterFallsBackAtExpiry: a holder that never releases hands
// nothing over; its queued waiter takes the key by its own attempt soon
// after the holder's lease has expired (by the time tolerance), without
// polling meanwhile.
func TestQueuedWaiterFallsBackAtExpiry(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	holder := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix})
	counter := &redistest.Counter{}
	wc := srv.Client(t)
	wc.AddHook(counter)
	waiter := newQueueBackend(t, wc, Options{Prefix: prefix})
	ctx := context.Background()

	const ttl = 300 * time.Millisecond
	if _, err := holder.Acquire(ctx, "dead", ttl); err != nil { // never released
		t.Fatal(err)
	}
	start := time.Now()
	g, err := lock.Acquire(ctx, waiter, "dead", lock.WithWait(5*time.Second),
		lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}))
	if err != nil {
		t.Fatalf("waiter: %v", err)
	}
	took := time.Since(start)
	// Redis drops the lease at its expiry: the fallback attempt comes just
	// after it.
	if took < ttl || took > ttl+500*time.Millisecond {
		t.Errorf("the waiter took the dead holder's key after %v, want between %v and %v", took, ttl, ttl+500*time.Millisecond)
	}
	if n := counter.Scripts.Load(); n > 4 {
		t.Errorf("the waiter ran %d scripts in %v, want at most 4 (no polling on the backoff schedule)", n, took)
	}
	if err := waiter.Release(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
}
