package redisbackend

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// parkedCount is how many waiters are parked behind b's lease on key.
func parkedCount(t *testing.T, b *Backend, key string) int {
	t.Helper()
	_, lockKey, err := b.lockKey("test", key)
	if err != nil {
		t.Fatal(err)
	}
	b.notify.mu.Lock()
	defer b.notify.mu.Unlock()
	if lk := b.notify.local[lockKey]; lk != nil {
		return len(lk.parked)
	}
	return 0
}

// hotLease returns a lease on key that a waiter of b got by waiting (a
// Backend.Acquire held the key, and its release handed the key over): the
// lease of a hot key, which b tracks (local.go).
func hotLease(t *testing.T, b *Backend, key string, opts ...lock.Option) lock.Lease {
	t.Helper()
	ctx := context.Background()
	plain, err := b.Acquire(ctx, key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	w := acquireAsync(ctx, b, key, opts...)
	waitFor(t, "the waiter in the Redis queue", 5*time.Second, func() bool { return queueLen(t, b.client, b, key) == 1 })
	if err := b.Release(ctx, plain.ID); err != nil {
		t.Fatal(err)
	}
	r := <-w
	if r.err != nil {
		t.Fatalf("the waiter: %v", r.err)
	}
	return r.lease
}

// TestHandOffLocality: two Backends on separate clients. A waiter of A
// that arrives while A's lease holds the key parks (no entry in Redis);
// within the quantum A's release hands it the lock in its reply, although
// B's waiter queued first; after the quantum A's release serves B's
// waiter in queue order, and A's next parked waiter then queues in Redis
// and gets the lock after it.
func TestHandOffLocality(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	rdb := srv.Client(t)
	const q = time.Second // long enough for -race on a loaded machine
	a := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix, HandOffLocality: q})
	b := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix, HandOffLocality: q})
	ctx := context.Background()

	first := hotLease(t, a, "k", slowPolling...)
	start := time.Now()
	wb := acquireAsync(ctx, b, "k", slowPolling...)
	waitFor(t, "B's waiter in the Redis queue", 5*time.Second, func() bool { return queueLen(t, rdb, a, "k") == 1 })
	wa := acquireAsync(ctx, a, "k", slowPolling...)
	waitFor(t, "A's waiter parked", 5*time.Second, func() bool { return parkedCount(t, a, "k") == 1 })
	if n := queueLen(t, rdb, a, "k"); n != 1 {
		t.Fatalf("Redis queue has %d entries with A's waiter parked, want 1 (B's)", n)
	}
	if err := a.Release(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= q {
		t.Fatalf("the release came %v after the lock did, past the quantum %v: the machine is too slow for this test", took, q)
	}
	ra := <-wa
	if ra.err != nil {
		t.Fatalf("A's parked waiter: %v", ra.err)
	}
	select {
	case rb := <-wb:
		t.Fatalf("B's waiter got the lock (%v) while A's lock was within its quantum", rb.err)
	default:
	}
	if n := queueLen(t, rdb, a, "k"); n != 1 {
		t.Errorf("Redis queue has %d entries after the local hand-off, want 1 (B's)", n)
	}
	if ra.lease.Fence <= first.Fence {
		t.Errorf("local hand-off fence %s, want above %s", ra.lease.Fence, first.Fence)
	}

	// A second waiter of A parks behind the new holder; past the quantum,
	// the release goes to B's waiter, the oldest.
	wa2 := acquireAsync(ctx, a, "k", slowPolling...)
	waitFor(t, "A's second waiter parked", 5*time.Second, func() bool { return parkedCount(t, a, "k") == 1 })
	time.Sleep(time.Until(start.Add(q + 50*time.Millisecond)))
	if err := a.Release(ctx, ra.lease.ID); err != nil {
		t.Fatal(err)
	}
	rb := <-wb
	if rb.err != nil {
		t.Fatalf("B's waiter: %v", rb.err)
	}
	// Asked for an attempt at once (its own fallback, slowPolling's, would
	// come after 2s: its delay capped by the default MaxDelay).
	waitFor(t, "A's second waiter in the Redis queue", time.Second, func() bool { return queueLen(t, rdb, a, "k") == 1 })
	select {
	case r := <-wa2:
		t.Fatalf("A's second waiter got the lock (%v) while B's waiter holds it", r.err)
	default:
	}
	if err := b.Release(ctx, rb.lease.ID); err != nil {
		t.Fatal(err)
	}
	ra2 := <-wa2
	if ra2.err != nil {
		t.Fatalf("A's second waiter: %v", ra2.err)
	}
	if !(rb.lease.Fence > ra.lease.Fence && ra2.lease.Fence > rb.lease.Fence) {
		t.Errorf("fences %s, %s, %s: want increasing in grant order", ra.lease.Fence, rb.lease.Fence, ra2.lease.Fence)
	}
	if err := a.Release(ctx, ra2.lease.ID); err != nil {
		t.Fatal(err)
	}
}

// TestParkedWaiterLeaves: a parked waiter that gives up, even while the
// release that names it is on its way, takes nothing: its id is retired,
// the release frees the key.
func TestParkedWaiterLeaves(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	rdb := srv.Client(t)
	a := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix, HandOffLocality: time.Minute})
	ctx := context.Background()
	holder := hotLease(t, a, "k", slowPolling...)
	wctx, cancel := context.WithCancel(ctx)
	w := acquireAsync(wctx, a, "k", slowPolling...)
	waitFor(t, "the waiter parked", 5*time.Second, func() bool { return parkedCount(t, a, "k") == 1 })

	// The release names the waiter (as Release does) ...
	lockKey, young, cand := a.notify.candidate(holder.ID, a.quantum)
	if !young || cand == nil {
		t.Fatalf("candidate = %q, %v, %v; want the parked waiter", lockKey, young, cand)
	}
	// ... the waiter leaves before the release runs (its id is released:
	// a tombstone) ...
	cancel()
	if r := <-w; !errors.Is(r.err, context.Canceled) && lock.CodeOf(r.err) != lock.CodeAborted {
		t.Fatalf("the cancelled waiter: %v", r.err)
	}
	idKey := a.indexKey(cand.id)
	waitFor(t, "the waiter's id retired", 5*time.Second, func() bool {
		return strings.HasPrefix(rdb.Get(ctx, idKey).Val(), "\x00")
	})
	// ... and then the release runs: it must not grant the retired id.
	own := ownWaiters{channel: a.notify.channel, bound: a.localityArg, cand: cand.entry}
	reply, err := a.run(ctx, a.releaseCmd(a.indexKey(holder.ID), holder.ID, own)).Result()
	if err != nil {
		t.Fatal(err)
	}
	granted, err := a.released(ctx, "release", reply)
	if err != nil || granted != "" {
		t.Fatalf("release reply %v (%q, %v): want a release that handed the lock to no waiter of A", reply, granted, err)
	}
	a.notify.released(holder.ID, lockKey, granted, cand)
	if n := rdb.Exists(ctx, lockKey).Val(); n != 0 {
		t.Errorf("the key is still locked: %q", rdb.Get(ctx, lockKey).Val())
	}
	if v := rdb.Get(ctx, idKey).Val(); !strings.HasPrefix(v, "\x00") {
		t.Errorf("the waiter's index = %q, want its tombstone", v)
	}
}

// TestParkedWaiterOutlivesLostHolder: a waiter parked behind a lease
// that is never released (its holder stalled) gets the lock after the
// lease's expiry, by its fallback attempt in Redis.
func TestParkedWaiterOutlivesLostHolder(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	a := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix, HandOffLocality: time.Minute})
	ctx := context.Background()
	fast := []lock.Option{lock.WithTTL(300 * time.Millisecond), lock.WithWait(10 * time.Second),
		lock.WithRetry(lock.Retry{MaxRetries: 1000, BaseDelay: 50 * time.Millisecond, Fixed: true, NoJitter: true})}
	hotLease(t, a, "k", fast...)
	start := time.Now()
	w := acquireAsync(ctx, a, "k", fast...)
	waitFor(t, "the waiter parked", 5*time.Second, func() bool { return parkedCount(t, a, "k") == 1 })
	r := <-w
	if r.err != nil {
		t.Fatalf("the parked waiter: %v", r.err)
	}
	if took := r.at.Sub(start); took > 3*time.Second {
		t.Errorf("the parked waiter got the lock after %v, want soon after the lost lease's expiry (300ms)", took)
	}
}

// TestParkedWaiterAfterQuantum: past the quantum, with nobody queued in
// Redis, the release still hands the lock to the parked waiter in its
// reply: the wait costs Redis the release alone.
func TestParkedWaiterAfterQuantum(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	a := newQueueBackend(t, srv.Client(t), Options{HandOffLocality: time.Millisecond})
	ctx := context.Background()
	holder := hotLease(t, a, "k", slowPolling...)
	w := acquireAsync(ctx, a, "k", slowPolling...)
	waitFor(t, "the waiter parked", 5*time.Second, func() bool { return parkedCount(t, a, "k") == 1 })
	time.Sleep(20 * time.Millisecond) // past the quantum
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, holder.ID); err != nil {
		t.Fatal(err)
	}
	r := <-w
	if r.err != nil {
		t.Fatalf("the parked waiter: %v", r.err)
	}
	if got := commandCalls(t, rdb)["evalsha"]; got != 1 {
		t.Errorf("%d scripts from the release to the waiter's grant, want 1 (the release)", got)
	}
	if err := a.Release(ctx, r.lease.ID); err != nil {
		t.Fatal(err)
	}
}
