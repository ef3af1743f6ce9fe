package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// keepTTL is the TTL of the slots kept alive: short, so that the sleep
// past it (plus the tolerance) stays short.
const keepTTL = 300 * time.Millisecond

func (s *suite) limitKeepTests() []test {
	return []test{
		{"Extend of a slot", limitTest(s.testLimitExtend)},
		{"Keep and Hold keep a slot past its TTL", limitTest(s.testLimitKeep)},
	}
}

// testLimitExtend: Extend of a slot sets its expiry to ttl after now by
// the backend's clock, as for a lock; LookupID and LookupLimit report it,
// the fence is unchanged, and the slot still counts (and, now the
// earliest, gives the LockedError its expiry).
func (s *suite) testLimitExtend(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	a := mustSlot(t, lim, key, 2, longTTL)
	b := mustSlot(t, lim, key, 2, longTTL)
	const ttl = 2 * time.Second
	got, err := lim.Extend(ctx(t), b.ID, ttl)
	if err != nil {
		t.Fatalf("Extend(slot, %v): %v", ttl, err)
	}
	// b.ExpiresAt - longTTL is "now" at its grant by the backend's clock.
	if want := b.ExpiresAt.Add(ttl - longTTL); !near(got, want, extendSlack) {
		t.Errorf("Extend(slot, %v) = %v, want about %v", ttl, got, want)
	}
	info, err := lim.LookupID(ctx(t), b.ID)
	if err != nil || info == nil {
		t.Fatalf("LookupID after Extend = %v, %v; want the slot", info, err)
	}
	if !near(info.ExpiresAt, got, time.Millisecond) || info.Fence != b.Fence {
		t.Errorf("LookupID after Extend = expiry %v fence %s, want Extend's %v and unchanged %s", info.ExpiresAt, info.Fence, got, b.Fence)
	}
	if li := holders(t, lim, key); li == nil || len(li.Holders) != 2 || li.Holders[0].IDHash != lockdriver.HashKey(b.ID) ||
		!near(li.Holders[0].ExpiresAt, got, time.Millisecond) {
		t.Errorf("LookupLimit after Extend = %+v, want the extended slot first with expiry %v", li, got)
	}
	if le := wantFull(t, lim, key, 2); le != nil && !near(le.ExpiresAt, got, time.Millisecond) {
		t.Errorf("LockedError.ExpiresAt = %v, want the extended slot's %v", le.ExpiresAt, got)
	}
	releaseAll(t, lim, key, a, b)
}

// testLimitKeep: a slot taken by lock.Hold with WithLimit, and one taken
// by AcquireSlot and kept by lock.Keep, both with a TTL of keepTTL, are
// still held after a real sleep well past the TTL and the tolerance: held
// contexts live, both ids found with later expiries, the key full. Then
// both release cleanly.
func (s *suite) testLimitKeep(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	c, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	heldH, h, release, err := lock.Hold(c, lim, key, lock.WithLimit(2), lock.WithTTL(keepTTL), lock.WithWait(0))
	if err != nil {
		t.Fatalf("lock.Hold(WithLimit(2)): %v", err)
	}
	defer func() { _ = release() }()
	k := mustSlot(t, lim, key, 2, keepTTL)
	heldK, stop := lock.Keep(c, lim, k)
	defer func() { _ = stop() }()

	time.Sleep(expiryWait(keepTTL)) // real time: the heartbeat must run

	for name, l := range map[string]struct {
		held  context.Context
		lease lock.Lease
	}{"Hold": {heldH, h}, "Keep": {heldK, k}} {
		if err := l.held.Err(); err != nil {
			t.Errorf("%s: held context done (%v, cause %v), want the slot kept", name, err, context.Cause(l.held))
		}
		info, err := lim.LookupID(ctx(t), l.lease.ID)
		if err != nil || info == nil {
			t.Errorf("%s: LookupID after %v = %v, %v; want the slot, kept alive", name, expiryWait(keepTTL), info, err)
			continue
		}
		if !info.ExpiresAt.After(l.lease.ExpiresAt) {
			t.Errorf("%s: ExpiresAt = %v, want later than the grant's %v", name, info.ExpiresAt, l.lease.ExpiresAt)
		}
	}
	wantFull(t, lim, key, 2)
	if err := release(); err != nil {
		t.Errorf("Hold's release: %v, want nil", err)
	}
	if err := stop(); err != nil {
		t.Errorf("Keep's stop: %v, want nil", err)
	}
	releaseAll(t, lim, key, k)
}
