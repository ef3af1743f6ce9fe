package locktest

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
)

// fenceGrants is how many times the fence tests take one key.
const fenceGrants = 20

func (s *suite) fenceTests() []test {
	return []test{
		{"strictly increasing per key", s.testFenceIncreasing},
		{"independent across keys", s.testFenceIndependent},
	}
}

func requireFencing(t *testing.T, b lock.Backend) {
	t.Helper()
	if !fencing(b) {
		t.Skip("backend does not offer fencing (Capabilities().Fencing is false)")
	}
}

// testFenceIncreasing: fenceGrants sequential grants on one key get
// well-formed fences, each greater than the last by string and by number.
func (s *suite) testFenceIncreasing(t *testing.T, b lock.Backend) {
	requireFencing(t, b)
	key := s.key(t, "k")
	var prev lock.Fence
	for i := range fenceGrants {
		l := mustAcquire(t, b, key, longTTL)
		if i > 0 {
			if l.Fence.Compare(prev) <= 0 {
				t.Errorf("grant %d: fence %s, want greater than %s", i, l.Fence, prev)
			}
			n, _ := l.Fence.Uint64()
			p, _ := prev.Uint64()
			if n <= p {
				t.Errorf("grant %d: fence value %d, want greater than %d", i, n, p)
			}
		}
		prev = l.Fence
		mustRelease(t, b, l)
	}
}

// testFenceIndependent: grants on one key do not advance another key's
// fences, so two fresh keys start at the same fence however busy a third
// key was in between.
func (s *suite) testFenceIndependent(t *testing.T, b lock.Backend) {
	requireFencing(t, b)
	if s.cfg.sharedFences {
		s.testFenceInterleaved(t, b)
		return
	}
	first := func(key string) lock.Fence {
		t.Helper()
		l := mustAcquire(t, b, key, longTTL)
		mustRelease(t, b, l)
		return l.Fence
	}
	before := first(s.key(t, "fresh-before"))
	busy := s.key(t, "busy")
	var last lock.Fence
	for range fenceGrants {
		last = first(busy)
	}
	after := first(s.key(t, "fresh-after"))
	if after != before {
		t.Errorf("first fence of a fresh key = %s after %d grants on another key, want %s as before them",
			after, fenceGrants, before)
	}
	if last <= after {
		t.Errorf("busy key's fence %s after %d grants, want greater than a fresh key's %s", last, fenceGrants, after)
	}
}

// testFenceInterleaved (WithSharedFences): grants alternating between two
// keys give each key strictly increasing fences.
func (s *suite) testFenceInterleaved(t *testing.T, b lock.Backend) {
	keys := []string{s.key(t, "a"), s.key(t, "b")}
	last := map[string]lock.Fence{}
	for i := range 2 * fenceGrants {
		key := keys[i%2]
		l := mustAcquire(t, b, key, longTTL)
		if prev, ok := last[key]; ok && l.Fence.Compare(prev) <= 0 {
			t.Errorf("grant %d on %s: fence %s, want greater than its last %s", i, key, l.Fence, prev)
		}
		last[key] = l.Fence
		mustRelease(t, b, l)
	}
}
