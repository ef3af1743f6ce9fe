package locktest

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func (s *suite) limitOwnershipTests() []test {
	return []test{
		{"a foreign or stale id frees nothing", limitTest(s.testLimitForeignID)},
		{"a release frees exactly one slot", limitTest(s.testLimitReleaseOne)},
	}
}

// testLimitForeignID: with two of three slots held, a random id, a
// released slot's id (also after another slot took its place) and a lock
// id of another key neither release nor extend a slot of the key.
func (s *suite) testLimitForeignID(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	a := mustSlot(t, lim, key, 3, longTTL)
	b := mustSlot(t, lim, key, 3, longTTL)
	other := mustAcquire(t, lim, s.key(t, "other"), longTTL)

	random := lockdriver.NewLockID()
	wantNotHeld(t, "Release with a random id", lim.Release(ctx(t), random))
	_, err := lim.Extend(ctx(t), random, longTTL)
	wantNotHeld(t, "Extend with a random id", err)
	assertSlots(t, lim, key, a, b)

	mustRelease(t, lim, a)
	assertGone(t, lim, a.ID)
	wantNotHeld(t, "second Release of a slot", lim.Release(ctx(t), a.ID))
	_, err = lim.Extend(ctx(t), a.ID, longTTL)
	wantNotHeld(t, "Extend of a released slot", err)
	assertSlots(t, lim, key, b)

	c := mustSlot(t, lim, key, 3, longTTL)
	wantNotHeld(t, "Release with a released slot's id after a new grant", lim.Release(ctx(t), a.ID))
	assertSlots(t, lim, key, b, c)

	mustRelease(t, lim, other)
	assertSlots(t, lim, key, b, c)
	releaseAll(t, lim, key, b, c)
}

// testLimitReleaseOne: with all three slots held, releasing one by its id
// frees exactly that one: its id is gone, the others hold on, and exactly
// one new slot is granted before the key is full again.
func (s *suite) testLimitReleaseOne(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	ls := []lock.Lease{mustSlot(t, lim, key, 3, longTTL), mustSlot(t, lim, key, 3, longTTL), mustSlot(t, lim, key, 3, longTTL)}
	wantFull(t, lim, key, 3)

	mustRelease(t, lim, ls[1])
	assertGone(t, lim, ls[1].ID)
	assertSlots(t, lim, key, ls[0], ls[2])
	ls[1] = mustSlot(t, lim, key, 3, longTTL)
	wantFull(t, lim, key, 3)
	assertSlots(t, lim, key, ls...)
	releaseAll(t, lim, key, ls...)
}
