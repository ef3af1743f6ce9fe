package locktest

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

func (s *suite) limitFenceTests() []test {
	return []test{
		{"strictly increasing per key in grant order", limitTest(s.testLimitFenceOrder)},
		{"slots and locks share the key's order", limitTest(s.testLimitFenceKinds)},
		{"interleaved keys", limitTest(s.testLimitFenceInterleaved)},
	}
}

// wantIncreasing fails the test unless fence f is above prev, by string
// and by number.
func wantIncreasing(t *testing.T, what string, f, prev lock.Fence) {
	t.Helper()
	n, _ := f.Uint64()
	p, _ := prev.Uint64()
	if f.Compare(prev) <= 0 || n <= p {
		t.Errorf("%s: fence %s, want greater than %s", what, f, prev)
	}
}

// testLimitFenceOrder: fenceGrants grants on one key of n = 5, released
// in another order than granted (the oldest slot lives longest), get
// fences each above the previous grant's.
func (s *suite) testLimitFenceOrder(t *testing.T, lim lock.IDBackend) {
	requireFencing(t, lim)
	key := s.key(t, "k")
	const n = 5
	var held []lock.Lease
	var prev lock.Fence
	for i := range fenceGrants {
		if len(held) == n {
			// Release the newest but one: the release order is not the grant order.
			mustRelease(t, lim, held[n-2])
			held = append(held[:n-2], held[n-1])
		}
		l := mustSlot(t, lim, key, n, longTTL)
		if i > 0 {
			wantIncreasing(t, "grant", l.Fence, prev)
		}
		prev = l.Fence
		held = append(held, l)
	}
	releaseAll(t, lim, key, held...)
}

// testLimitFenceKinds: a key used as a lock, then as a limit, then as a
// lock again takes every grant's fence from one order.
func (s *suite) testLimitFenceKinds(t *testing.T, lim lock.IDBackend) {
	requireFencing(t, lim)
	key := s.key(t, "k")
	l1 := mustAcquire(t, lim, key, longTTL)
	mustRelease(t, lim, l1)
	s1 := mustSlot(t, lim, key, 2, longTTL)
	s2 := mustSlot(t, lim, key, 2, longTTL)
	releaseAll(t, lim, key, s1, s2)
	l2 := mustAcquire(t, lim, key, longTTL)
	mustRelease(t, lim, l2)
	wantIncreasing(t, "first slot after a lock", s1.Fence, l1.Fence)
	wantIncreasing(t, "second slot", s2.Fence, s1.Fence)
	wantIncreasing(t, "lock after the slots", l2.Fence, s2.Fence)
}

// testLimitFenceInterleaved: slots granted alternately on two keys give
// each key strictly increasing fences (with WithSharedFences too, where
// the other key's grants may advance them).
func (s *suite) testLimitFenceInterleaved(t *testing.T, lim lock.IDBackend) {
	requireFencing(t, lim)
	keys := []string{s.key(t, "a"), s.key(t, "b")}
	last := map[string]lock.Fence{}
	held := map[string][]lock.Lease{}
	for i := range 2 * fenceGrants {
		key := keys[i%2]
		if len(held[key]) == 3 {
			mustRelease(t, lim, held[key][0])
			held[key] = held[key][1:]
		}
		l := mustSlot(t, lim, key, 3, longTTL)
		if prev, ok := last[key]; ok {
			wantIncreasing(t, "grant on "+key, l.Fence, prev)
		}
		last[key] = l.Fence
		held[key] = append(held[key], l)
	}
	for _, key := range keys {
		releaseAll(t, lim, key, held[key]...)
	}
}
