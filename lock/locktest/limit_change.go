package locktest

import (
	"errors"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

func (s *suite) limitChangeTests() []test {
	return []test{{"each call's n is its own", limitTest(s.testLimitChangeN)}}
}

// testLimitChangeN: with three slots held under n = 3, a call with n = 2
// is refused (no holder is evicted), a call with n = 5 is granted at once,
// and so is one more; then the key is full for n = 5 too. After two
// releases (three holders), n = 3 is still refused and n = 4 granted.
func (s *suite) testLimitChangeN(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	ls := []lock.Lease{mustSlot(t, lim, key, 3, longTTL), mustSlot(t, lim, key, 3, longTTL), mustSlot(t, lim, key, 3, longTTL)}
	wantFull(t, lim, key, 2)
	if _, err := lock.Acquire(ctx(t), lim, key, lock.WithLimit(2), lock.WithWait(0)); !errors.Is(err, lock.ErrLocked) {
		t.Errorf("lock.Acquire(WithLimit(2)) with 3 holders: %v, want an error matching lock.ErrLocked", err)
	}
	assertSlots(t, lim, key, ls...)

	ls = append(ls, mustSlot(t, lim, key, 5, longTTL))
	wantFull(t, lim, key, 4)
	ls = append(ls, mustSlot(t, lim, key, 5, longTTL))
	wantFull(t, lim, key, 5)
	assertSlots(t, lim, key, ls...)

	mustRelease(t, lim, ls[0])
	mustRelease(t, lim, ls[3])
	ls = []lock.Lease{ls[1], ls[2], ls[4]}
	wantFull(t, lim, key, 3)
	ls = append(ls, mustSlot(t, lim, key, 4, longTTL))
	assertSlots(t, lim, key, ls...)
	releaseAll(t, lim, key, ls...)
}
