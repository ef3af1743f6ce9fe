package locktest

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func (s *suite) ownershipTests() []test {
	return []test{
		{"stale id cannot touch the next holder", s.testStaleID},
		{"release twice", s.testReleaseTwice},
		{"unknown id", s.testUnknownID},
	}
}

// testStaleID: after A released and B took the key, A's id neither
// releases nor extends B's lease, and deletes nothing.
func (s *suite) testStaleID(t *testing.T, b lock.Backend) {
	key := s.key(t, "k")
	a := mustAcquire(t, b, key, longTTL)
	mustRelease(t, b, a)
	h := mustAcquire(t, b, key, longTTL)

	wantNotHeld(t, "Release with the previous holder's id", b.Release(ctx(t), a.ID))
	_, err := b.Extend(ctx(t), a.ID, longTTL)
	wantNotHeld(t, "Extend with the previous holder's id", err)
	assertGone(t, b, a.ID)
	assertHeld(t, b, h)
	mustRelease(t, b, h)
	assertFree(t, b, key)
}

// testReleaseTwice: a second Release, and an Extend after Release, find
// nothing held.
func (s *suite) testReleaseTwice(t *testing.T, b lock.Backend) {
	key := s.key(t, "k")
	l := mustAcquire(t, b, key, longTTL)
	mustRelease(t, b, l)
	wantNotHeld(t, "second Release", b.Release(ctx(t), l.ID))
	_, err := b.Extend(ctx(t), l.ID, longTTL)
	wantNotHeld(t, "Extend after Release", err)
	assertFree(t, b, key)
	assertGone(t, b, l.ID)
}

// testUnknownID: a well-formed id that was never granted releases and
// extends nothing while another lease holds a key.
func (s *suite) testUnknownID(t *testing.T, b lock.Backend) {
	key := s.key(t, "k")
	h := mustAcquire(t, b, key, longTTL)
	id := lockdriver.NewLockID()
	wantNotHeld(t, "Release with a random id", b.Release(ctx(t), id))
	_, err := b.Extend(ctx(t), id, longTTL)
	wantNotHeld(t, "Extend with a random id", err)
	assertGone(t, b, id)
	assertHeld(t, b, h)
	mustRelease(t, b, h)
}
