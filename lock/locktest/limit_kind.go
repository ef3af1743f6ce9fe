package locktest

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

func (s *suite) limitKindTests() []test {
	return []test{
		{"a limit on a locked key", limitTest(s.testKindLockFirst)},
		{"a lock on a limited key", limitTest(s.testKindLimitFirst)},
	}
}

// testKindLockFirst: while a lock holds a key, AcquireSlot, lock.Acquire
// with WithLimit and LookupLimit fail with lock.ErrKindMismatch and leave
// the lock alone; once it is released, the key serves slots.
func (s *suite) testKindLockFirst(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	l := mustAcquire(t, lim, key, longTTL)
	_, err := lim.AcquireSlot(ctx(t), key, newSlotID(t, lim, key), 2, longTTL)
	wantKindMismatch(t, "AcquireSlot of a locked key", err)
	_, err = lock.Acquire(ctx(t), lim, key, lock.WithLimit(2), lock.WithWait(0))
	wantKindMismatch(t, "lock.Acquire(WithLimit(2)) of a locked key", err)
	_, err = lim.LookupLimit(ctx(t), key)
	wantKindMismatch(t, "LookupLimit of a locked key", err)
	assertHeld(t, lim, l)

	mustRelease(t, lim, l)
	sl := mustSlot(t, lim, key, 2, longTTL)
	assertSlots(t, lim, key, sl)
	releaseAll(t, lim, key, sl)
}

// testKindLimitFirst: while a slot holds a key, Acquire, lock.Acquire
// without a limit, IsLocked and LookupKey fail with lock.ErrKindMismatch
// and leave the slot alone; once it is released, the key serves a lock.
func (s *suite) testKindLimitFirst(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	sl := mustSlot(t, lim, key, 2, longTTL)
	_, err := lim.Acquire(ctx(t), key, longTTL)
	wantKindMismatch(t, "Acquire of a limited key", err)
	_, err = lock.Acquire(ctx(t), lim, key, lock.WithWait(0))
	wantKindMismatch(t, "lock.Acquire of a limited key", err)
	_, err = lim.IsLocked(ctx(t), key)
	wantKindMismatch(t, "IsLocked of a limited key", err)
	_, err = lim.LookupKey(ctx(t), key)
	wantKindMismatch(t, "LookupKey of a limited key", err)
	assertSlots(t, lim, key, sl)

	releaseAll(t, lim, key, sl)
	l := mustAcquire(t, lim, key, longTTL)
	assertHeld(t, lim, l)
	mustRelease(t, lim, l)
	assertFree(t, lim, key)
}
