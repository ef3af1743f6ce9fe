package redisbackend

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// slot takes a slot of key among n with a fresh id, failing the test on
// an error other than contention.
func slot(t *testing.T, b *Backend, key string, n int, ttl time.Duration) (lock.Lease, error) {
	t.Helper()
	id, err := b.NewLockID(key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.AcquireSlot(context.Background(), key, id, n, ttl)
	if err != nil && !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("AcquireSlot: %v", err)
	}
	return l, err
}

// TestLimitSlots: n slots are granted with strictly increasing fences, the
// next is refused with the earliest holder's expiry, and a release frees
// exactly one slot.
func TestLimitSlots(t *testing.T) {
	srv := redistest.Shared(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()

	var held []lock.Lease
	for i := 0; i < 3; i++ {
		l, err := slot(t, b, "exports", 3, time.Duration(10+i)*time.Second)
		if err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
		if i > 0 && l.Fence.Compare(held[i-1].Fence) <= 0 {
			t.Errorf("fence %s after %s, want increasing", l.Fence, held[i-1].Fence)
		}
		held = append(held, l)
	}
	_, err := slot(t, b, "exports", 3, time.Second)
	var le *lock.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("fourth slot: %v, want a LockedError", err)
	}
	if !le.ExpiresAt.Equal(held[0].ExpiresAt) {
		t.Errorf("LockedError.ExpiresAt %v, want the earliest holder's %v", le.ExpiresAt, held[0].ExpiresAt)
	}
	info, err := b.LookupLimit(ctx, "exports")
	if err != nil || info == nil {
		t.Fatalf("LookupLimit: %+v, %v", info, err)
	}
	if len(info.Holders) != 3 || info.Limit != 3 || info.KeyHash != lockdriver.HashKey("exports") {
		t.Errorf("LookupLimit = %+v, want 3 holders, limit 3", info)
	}
	if info.Holders[0].IDHash != lockdriver.HashKey(held[0].ID) || info.Holders[0].Fence != held[0].Fence {
		t.Errorf("first holder %+v, want the earliest expiry's", info.Holders[0])
	}
	if got, err := b.LookupID(ctx, held[1].ID); err != nil || got == nil || got.Fence != held[1].Fence || got.KeyHash != lockdriver.HashKey("exports") {
		t.Errorf("LookupID of a slot = %+v, %v", got, err)
	}
	exp, err := b.Extend(ctx, held[1].ID, time.Minute)
	if err != nil || !exp.After(held[1].ExpiresAt) {
		t.Errorf("Extend of a slot = %v, %v", exp, err)
	}
	if err := b.Release(ctx, held[1].ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, held[1].ID); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("second Release: %v, want ErrNotHeld", err)
	}
	l, err := slot(t, b, "exports", 3, time.Second)
	if err != nil {
		t.Fatalf("slot after a release: %v", err)
	}
	if l.Fence.Compare(held[2].Fence) <= 0 {
		t.Errorf("fence %s after %s, want increasing", l.Fence, held[2].Fence)
	}
	if _, err := slot(t, b, "exports", 3, time.Second); !errors.Is(err, lock.ErrLocked) {
		t.Errorf("a release freed more than one slot: %v", err)
	}
}

// TestLimitExpiryBySeverClock: an expired slot is free again.
func TestLimitExpiryByServerClock(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	if _, err := slot(t, b, "k", 1, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := slot(t, b, "k", 1, time.Second); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("second slot of 1: %v", err)
	}
	time.Sleep(100*time.Millisecond + time.Duration(wire.TimeToleranceMs)*time.Millisecond + 100*time.Millisecond)
	if _, err := slot(t, b, "k", 1, time.Second); err != nil {
		t.Fatalf("slot after the holder expired: %v", err)
	}
}

// TestLimitResend: a re-sent attempt with the id of a live slot gets that
// slot back; after its release the id takes nothing.
func TestLimitResend(t *testing.T) {
	srv := redistest.Shared(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	id, _ := b.NewLockID("k")
	l1, err := b.AcquireSlot(ctx, "k", id, 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := b.AcquireSlot(ctx, "k", id, 2, time.Minute)
	if err != nil || l2.Fence != l1.Fence {
		t.Fatalf("repeat = %+v, %v; want the same slot %s", l2, err, l1.Fence)
	}
	if info, _ := b.LookupLimit(ctx, "k"); info == nil || len(info.Holders) != 1 {
		t.Fatalf("repeat took a second slot: %+v", info)
	}
	if err := b.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcquireSlot(ctx, "k", id, 2, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("attempt with a released id: %v, want ErrNotHeld", err)
	}
}

// TestLimitKindMismatch: a key is a lock or a limit, never both at once.
func TestLimitKindMismatch(t *testing.T) {
	srv := redistest.Shared(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := b.NewLockID("k")
	if _, err := b.AcquireSlot(ctx, "k", id, 3, time.Minute); !errors.Is(err, lock.ErrKindMismatch) || lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Fatalf("slot on a locked key: %v, want ErrKindMismatch", err)
	}
	if _, err := b.LookupLimit(ctx, "k"); !errors.Is(err, lock.ErrKindMismatch) {
		t.Fatalf("LookupLimit on a locked key: %v", err)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	s, err := slot(t, b, "k", 3, time.Minute)
	if err != nil {
		t.Fatalf("slot on a freed key: %v", err)
	}
	if s.Fence.Compare(l.Fence) <= 0 {
		t.Errorf("slot fence %s after lock fence %s, want increasing (one counter)", s.Fence, l.Fence)
	}
	if _, err := b.Acquire(ctx, "k", time.Minute); !errors.Is(err, lock.ErrKindMismatch) {
		t.Fatalf("lock on a limit key: %v, want ErrKindMismatch", err)
	}
	if _, err := b.IsLocked(ctx, "k"); !errors.Is(err, lock.ErrKindMismatch) {
		t.Errorf("IsLocked on a limit key: %v", err)
	}
	if _, err := b.LookupKey(ctx, "k"); !errors.Is(err, lock.ErrKindMismatch) {
		t.Errorf("LookupKey on a limit key: %v", err)
	}
	if _, err := lock.Acquire(ctx, b, "k"); !errors.Is(err, lock.ErrKindMismatch) {
		t.Errorf("lock.Acquire on a limit key: %v", err)
	}
	if err := b.Release(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "k", time.Minute); err != nil {
		t.Fatalf("lock on a freed limit key: %v", err)
	}
}

// TestLimitHandOff: with limit 2 and 6 waiters over 3 Backends, every
// release hands its slot to a waiter at once (their polling is 3s away),
// and no more than 2 hold at any time.
func TestLimitHandOff(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	var bs []*Backend
	for i := 0; i < 3; i++ {
		bs = append(bs, newQueueBackend(t, srv.Client(t), Options{Prefix: prefix}))
	}
	var (
		in, peak atomic.Int32
		wg       sync.WaitGroup
		errs     = make(chan error, 8)
	)
	opts := append([]lock.Option{lock.WithLimit(2), lock.WithTTL(time.Minute)}, slowPolling...)
	start := time.Now()
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(b *Backend) {
			defer wg.Done()
			errs <- lock.Do(context.Background(), b, "hot", func(context.Context, lock.Lease) error {
				n := in.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(20 * time.Millisecond)
				in.Add(-1)
				return nil
			}, opts...)
		}(bs[i%3])
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := peak.Load(); p != 2 {
		t.Errorf("peak %d holders, want 2", p)
	}
	// Without hand-offs the 6 that wait would each need a 3s poll.
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("8 holders of 20ms with 2 slots took %v: the waiters were not handed the slots", d)
	}
}

// TestLimitQueuedWaiterTakesExpiredSlot: when a queued waiter's own
// attempt finds one of the slots expired (the other still live, so the
// sorted set is still there), the expired slot goes to the oldest waiter,
// the caller itself, and the attempt returns that slot rather than
// contention.
func TestLimitQueuedWaiterTakesExpiredSlot(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	if _, err := slot(t, b, "k", 2, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := slot(t, b, "k", 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	id, err := b.NewLockID("k")
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Join("k", id, 2, time.Minute, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Leave(true)
	waitFor(t, "the waiter's entry", 5*time.Second, func() bool {
		if _, err := w.Attempt(ctx); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("Attempt on a full limit: %v, want ErrLocked", err)
		}
		return queueLen(t, rdb, b, "k") == 1
	})
	time.Sleep(100*time.Millisecond + time.Duration(wire.TimeToleranceMs)*time.Millisecond + 100*time.Millisecond)
	l, err := w.Attempt(ctx)
	if err != nil || l.ID != id {
		t.Fatalf("Attempt after the holder expired = %+v, %v; want the waiter's slot", l, err)
	}
	if info, err := b.LookupID(ctx, id); err != nil || info == nil || info.Fence != l.Fence {
		t.Errorf("LookupID of the slot = %+v, %v; want fence %s", info, err, l.Fence)
	}
	if n := queueLen(t, rdb, b, "k"); n != 0 {
		t.Errorf("queue has %d entries, want 0", n)
	}
}

// untilServerMs waits until the server's clock (TIME) reads at least t.
func untilServerMs(t *testing.T, b *Backend, at time.Time) {
	t.Helper()
	waitFor(t, "the server's clock to pass "+at.Format(time.StampMilli), time.Minute, func() bool {
		now, err := b.client.Time(context.Background()).Result()
		if err != nil {
			t.Fatalf("TIME: %v", err)
		}
		return !now.Before(at)
	})
}

// TestLimitSlotEndsAtItsExpiry: a slot is live until its expiry by the
// server's clock and not a moment longer, also while another slot keeps
// the key's sorted set alive: the contention error's ExpiresAt is when a
// slot is granted again, LookupLimit no longer lists the slot, and its id
// neither extends nor releases. (A slot live for the time tolerance past
// its expiry would refuse the grant for another second.)
func TestLimitSlotEndsAtItsExpiry(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	short, err := slot(t, b, "k", 2, 600*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	long, err := slot(t, b, "k", 2, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = slot(t, b, "k", 2, time.Minute)
	var le *lock.LockedError
	if !errors.As(err, &le) || !le.ExpiresAt.Equal(short.ExpiresAt) {
		t.Fatalf("third slot of 2: %v, want a LockedError with the short slot's expiry %v", err, short.ExpiresAt)
	}
	untilServerMs(t, b, le.ExpiresAt.Add(20*time.Millisecond))

	info, err := b.LookupLimit(ctx, "k")
	if err != nil || info == nil || len(info.Holders) != 1 || info.Holders[0].Fence != long.Fence {
		t.Errorf("LookupLimit after the short slot's expiry = %+v, %v; want the long slot alone", info, err)
	}
	if _, err := b.Extend(ctx, short.ID, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Extend of the expired slot: %v, want ErrNotHeld", err)
	}
	l, err := slot(t, b, "k", 2, time.Minute)
	if err != nil {
		t.Fatalf("a slot at the ExpiresAt the refusal gave: %v", err)
	}
	if l.Fence.Compare(long.Fence) <= 0 {
		t.Errorf("fence %s, want above %s", l.Fence, long.Fence)
	}
}

// TestLimitWaiterGrantedAtExpiry: a caller waiting for a full limit, one
// of whose holders never releases, gets that slot as it expires by the
// server's clock, not a time tolerance later (the other holder keeps the
// key's sorted set). The grant's time is the server's (its ExpiresAt
// less the TTL).
func TestLimitWaiterGrantedAtExpiry(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	holder, err := slot(t, b, "k", 2, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := slot(t, b, "k", 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const ttl = time.Minute
	l, err := lock.Acquire(ctx, b, "k", lock.WithLimit(2), lock.WithTTL(ttl), lock.WithWait(10*time.Second))
	if err != nil {
		t.Fatalf("Acquire waiting for the slot: %v", err)
	}
	defer func() { _ = b.Release(context.Background(), l.ID) }()
	// Granted just after the holder's expiry: the waiter polls a little
	// after it. Half the time tolerance is far more than that.
	granted := l.ExpiresAt.Add(-ttl)
	late := granted.Sub(holder.ExpiresAt)
	t.Logf("granted %v after the holder's expiry", late)
	if late < 0 || late > lockdriver.TimeTolerance/2 {
		t.Errorf("granted %v after the holder's expiry, want within [0, %v]", late, lockdriver.TimeTolerance/2)
	}
}
