package otellock

import (
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// TestHeldTrackerBounded adds leases that are never released: the tracker
// sweeps the expired ones when it doubles, and never exceeds heldMax.
func TestHeldTrackerBounded(t *testing.T) {
	tr := newHeldTracker()
	now := time.Now()
	lease := func(expires time.Time) lock.Lease {
		return lock.Lease{ID: lockdriver.NewLockID(), ExpiresAt: expires}
	}

	// Leases long expired by now: the first sweep (at heldMinSweep) drops them.
	for range heldMinSweep {
		tr.add(lease(now.Add(-time.Hour)), now)
	}
	if got := tr.len(); got != heldMinSweep {
		t.Fatalf("before the sweep: got %d entries, want %d", got, heldMinSweep)
	}
	live := lease(now.Add(time.Hour))
	tr.add(live, now)
	if got := tr.len(); got != 1 {
		t.Fatalf("after the sweep: got %d entries, want only the live lease", got)
	}
	if _, ok := tr.remove(live.ID); !ok {
		t.Fatal("the live lease was swept")
	}

	// Live leases: nothing to sweep, so the cap applies.
	for range heldMax + 100 {
		tr.add(lease(now.Add(time.Hour)), now)
	}
	if got := tr.len(); got != heldMax {
		t.Fatalf("live leases past the cap: got %d entries, want %d", got, heldMax)
	}
	// Once they have expired, a sweep a second later makes room.
	later := now.Add(2 * time.Hour)
	tr.add(lease(later.Add(time.Minute)), later)
	if got := tr.len(); got != 1 {
		t.Fatalf("after the leases expired: got %d entries, want 1", got)
	}
}

// TestHeldTrackerExtend checks that an extended lease is not swept at its
// first expiry.
func TestHeldTrackerExtend(t *testing.T) {
	tr := newHeldTracker()
	now := time.Now()
	l := lock.Lease{ID: lockdriver.NewLockID(), ExpiresAt: now.Add(time.Second)}
	tr.add(l, now)
	tr.extend(l.ID, now.Add(time.Hour))
	tr.sweep(now.Add(time.Minute))
	if _, ok := tr.remove(l.ID); !ok {
		t.Error("the extended lease was swept at its original expiry")
	}
	if _, ok := tr.remove(l.ID); ok {
		t.Error("remove found the lease twice")
	}
}
