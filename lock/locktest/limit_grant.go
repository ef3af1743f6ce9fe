package locktest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

func (s *suite) limitGrantTests() []test {
	var tests []test
	for _, n := range limitSizes {
		tests = append(tests, test{fmt.Sprintf("n slots then LockedError, n=%d", n), limitTest(func(t *testing.T, lim lock.IDBackend) {
			s.testLimitGrant(t, lim, n)
		})})
	}
	return append(tests, test{"lock.Acquire with WithLimit", limitTest(s.testLimitAcquire)})
}

// testLimitGrant: n slots of a key are granted at once with distinct ids,
// the next attempt is refused with a LockedError whose ExpiresAt is the
// earliest expiry among the holders (the first slot's: the others are
// longer), nothing changed, and a release lets exactly one more in.
func (s *suite) testLimitGrant(t *testing.T, lim lock.IDBackend, n int) {
	key := s.key(t, "k")
	var ls []lock.Lease
	for i := range n {
		// The first slot expires first although later slots are granted later.
		ls = append(ls, mustSlot(t, lim, key, n, longTTL+time.Duration(i)*time.Second))
	}
	ids := map[string]bool{}
	for _, l := range ls {
		if ids[l.ID] {
			t.Fatalf("two slots share a lock id")
		}
		ids[l.ID] = true
	}
	le := wantFull(t, lim, key, n)
	if le != nil && !near(le.ExpiresAt, ls[0].ExpiresAt, time.Millisecond) {
		t.Errorf("LockedError.ExpiresAt = %v, want the earliest holder's expiry %v", le.ExpiresAt, ls[0].ExpiresAt)
	}
	assertSlots(t, lim, key, ls...)

	mustRelease(t, lim, ls[n-1])
	ls[n-1] = mustSlot(t, lim, key, n, longTTL)
	wantFull(t, lim, key, n)
	assertSlots(t, lim, key, ls...)
	releaseAll(t, lim, key, ls...)
}

// testLimitAcquire: lock.Acquire with WithLimit(2) and no wait takes the
// two slots and is then refused with an error matching ErrLocked; the
// leases are ordinary: Release frees them.
func (s *suite) testLimitAcquire(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	opts := []lock.Option{lock.WithLimit(2), lock.WithWait(0), lock.WithTTL(longTTL)}
	var ls []lock.Lease
	for range 2 {
		l, err := lock.Acquire(ctx(t), lim, key, opts...)
		if err != nil {
			t.Fatalf("lock.Acquire(WithLimit(2)): %v", err)
		}
		ls = append(ls, l)
	}
	if l, err := lock.Acquire(ctx(t), lim, key, opts...); !errors.Is(err, lock.ErrLocked) {
		if err == nil {
			mustRelease(t, lim, l)
		}
		t.Errorf("third lock.Acquire(WithLimit(2)): %v, want an error matching lock.ErrLocked", err)
	}
	assertSlots(t, lim, key, ls...)
	releaseAll(t, lim, key, ls...)
}
