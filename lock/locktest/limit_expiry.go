package locktest

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

func (s *suite) limitExpiryTests() []test {
	return []test{{"an expired slot frees its place", limitTest(s.testLimitExpiry)}}
}

// testLimitExpiry waits once for short leases on four keys to lapse:
//   - "one of two": of a full key's two slots, the short one lapses by the
//     backend's clock: a new slot is granted with a higher fence while the
//     long one stays, and the lapsed id neither releases nor extends;
//   - "all": every slot lapsed: the key has no holders;
//   - "lock then limit" and "limit then lock": a lapsed lease of one kind
//     does not block the other kind (no lock.ErrKindMismatch), and the
//     new grant's fence is higher.
func (s *suite) testLimitExpiry(t *testing.T, lim lock.IDBackend) {
	mixed, all, lockFirst, limitFirst := s.key(t, "one-of-two"), s.key(t, "all"), s.key(t, "lock-first"), s.key(t, "limit-first")
	short := mustSlot(t, lim, mixed, 2, shortTTL)
	long := mustSlot(t, lim, mixed, 2, longTTL)
	wantFull(t, lim, mixed, 2)
	gone := []lock.Lease{mustSlot(t, lim, all, 2, shortTTL), mustSlot(t, lim, all, 2, shortTTL)}
	oldLock := mustAcquire(t, lim, lockFirst, shortTTL)
	oldSlot := mustSlot(t, lim, limitFirst, 1, shortTTL)

	s.wait(t, expiryWait(shortTTL))

	t.Run("one of two", func(t *testing.T) {
		assertGone(t, lim, short.ID)
		assertSlots(t, lim, mixed, long)
		h := mustSlot(t, lim, mixed, 2, longTTL)
		if fencing(lim) && h.Fence <= long.Fence {
			t.Errorf("fence after expiry = %s, want greater than the last grant's %s", h.Fence, long.Fence)
		}
		wantFull(t, lim, mixed, 2)
		wantNotHeld(t, "Release with the expired id", lim.Release(ctx(t), short.ID))
		_, err := lim.Extend(ctx(t), short.ID, longTTL)
		wantNotHeld(t, "Extend with the expired id", err)
		assertSlots(t, lim, mixed, long, h)
		releaseAll(t, lim, mixed, long, h)
	})
	t.Run("all", func(t *testing.T) {
		assertSlots(t, lim, all)
		for _, l := range gone {
			assertGone(t, lim, l.ID)
		}
		h := mustSlot(t, lim, all, 2, longTTL)
		if fencing(lim) && h.Fence <= gone[1].Fence {
			t.Errorf("fence after expiry = %s, want greater than the expired slot's %s", h.Fence, gone[1].Fence)
		}
		releaseAll(t, lim, all, h)
	})
	t.Run("lock then limit", func(t *testing.T) {
		h := mustSlot(t, lim, lockFirst, 2, longTTL)
		if fencing(lim) && h.Fence <= oldLock.Fence {
			t.Errorf("slot fence after an expired lock = %s, want greater than the lock's %s", h.Fence, oldLock.Fence)
		}
		wantNotHeld(t, "Release with the expired lock's id", lim.Release(ctx(t), oldLock.ID))
		releaseAll(t, lim, lockFirst, h)
	})
	t.Run("limit then lock", func(t *testing.T) {
		h := mustAcquire(t, lim, limitFirst, longTTL)
		if fencing(lim) && h.Fence <= oldSlot.Fence {
			t.Errorf("lock fence after an expired slot = %s, want greater than the slot's %s", h.Fence, oldSlot.Fence)
		}
		wantNotHeld(t, "Release with the expired slot's id", lim.Release(ctx(t), oldSlot.ID))
		assertHeld(t, lim, h)
		mustRelease(t, lim, h)
		assertFree(t, lim, limitFirst)
	})
}
