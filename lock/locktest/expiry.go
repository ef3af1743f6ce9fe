package locktest

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

func (s *suite) expiryTests() []test {
	return []test{{"an expired lease frees its key", s.testExpiry}}
}

// testExpiry waits once for three short leases to lapse:
//   - "taken": a new holder gets the key with a higher fence, and the old
//     id then neither releases nor extends the new lease;
//   - "untouched": nobody took the key, and the old id still finds
//     nothing held;
//   - "shortened": a long lease extended to a short TTL lapses at the
//     short TTL (Extend replaces the remaining time, it does not add).
func (s *suite) testExpiry(t *testing.T, b lock.Backend) {
	taken, untouched, shortened := s.key(t, "taken"), s.key(t, "untouched"), s.key(t, "shortened")
	old := mustAcquire(t, b, taken, shortTTL)
	idle := mustAcquire(t, b, untouched, shortTTL)
	long := mustAcquire(t, b, shortened, longTTL)
	if _, err := b.Extend(ctx(t), long.ID, shortTTL); err != nil {
		t.Fatalf("Extend to a short TTL: %v", err)
	}

	s.wait(t, expiryWait(shortTTL))

	t.Run("taken", func(t *testing.T) {
		assertFree(t, b, taken)
		assertGone(t, b, old.ID)
		h := mustAcquire(t, b, taken, longTTL)
		if fencing(b) && h.Fence <= old.Fence {
			t.Errorf("fence after expiry = %s, want greater than the expired lease's %s", h.Fence, old.Fence)
		}
		wantNotHeld(t, "Release with the expired id", b.Release(ctx(t), old.ID))
		_, err := b.Extend(ctx(t), old.ID, longTTL)
		wantNotHeld(t, "Extend with the expired id", err)
		assertHeld(t, b, h)
		mustRelease(t, b, h)
	})
	t.Run("untouched", func(t *testing.T) {
		assertFree(t, b, untouched)
		assertGone(t, b, idle.ID)
		_, err := b.Extend(ctx(t), idle.ID, longTTL)
		wantNotHeld(t, "Extend with the expired id", err)
		wantNotHeld(t, "Release with the expired id", b.Release(ctx(t), idle.ID))
		assertFree(t, b, untouched)
	})
	t.Run("shortened", func(t *testing.T) {
		assertFree(t, b, shortened)
		assertGone(t, b, long.ID)
		h := mustAcquire(t, b, shortened, longTTL)
		if fencing(b) && h.Fence <= long.Fence {
			t.Errorf("fence after expiry = %s, want greater than the expired lease's %s", h.Fence, long.Fence)
		}
		mustRelease(t, b, h)
	})
}
