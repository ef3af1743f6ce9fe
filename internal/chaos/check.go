package chaos

import (
	"fmt"
	"sort"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// OverlapSlack is how far (server clock, milliseconds) a grant may start
// before the previous lease on its key ended without counting as an
// overlap. The clients and redis-server read the same host clock, so this
// only absorbs Redis's millisecond truncation; the store's own
// TIME_TOLERANCE (1 s) is far larger and is not granted here.
const OverlapSlack = 5

// Violation is a broken invariant found in the history.
type Violation struct {
	Check  string
	Detail string
}

// CheckFenceOrder checks that, per key, fences strictly increase in the
// server's grant order: a grant acquired earlier (server clock) has a
// lower fence, and no fence is granted twice. Grants in the same
// millisecond are not ordered by the clock and are checked only for
// uniqueness.
func CheckFenceOrder(grants []Grant) []Violation {
	var vs []Violation
	for key, gs := range byKey(grants) {
		sort.Slice(gs, func(i, j int) bool { return gs[i].Fence < gs[j].Fence })
		for i := 1; i < len(gs); i++ {
			if gs[i].Fence == gs[i-1].Fence {
				vs = append(vs, Violation{"fence-order", fmt.Sprintf("key %s: fence %s granted twice (workers %d and %d)",
					lock.HashKey(key), gs[i].Fence, gs[i-1].Worker, gs[i].Worker)})
			}
		}
		// Every earlier-by-fence grant must not be later-by-clock.
		maxAcq := int64(0)
		var maxG Grant
		for _, g := range gs {
			if g.AcquiredMs < maxAcq {
				vs = append(vs, Violation{"fence-order", fmt.Sprintf("key %s: fence %s acquired at %d ms, after fence %s at %d ms",
					lock.HashKey(key), maxG.Fence, maxAcq, g.Fence, g.AcquiredMs)})
			}
			if g.AcquiredMs > maxAcq {
				maxAcq, maxG = g.AcquiredMs, g
			}
		}
	}
	return vs
}

// CheckOverlap checks mutual exclusion by the server's clock: per key, in
// fence order, every grant starts no earlier than every earlier lease on
// the key ended ([Grant.EndMs], minus [OverlapSlack]). It also returns
// the largest overlap seen (0 when none).
func CheckOverlap(grants []Grant) (vs []Violation, maxOverlap time.Duration) {
	for key, gs := range byKey(grants) {
		sort.Slice(gs, func(i, j int) bool { return gs[i].Fence < gs[j].Fence })
		var prevEnd int64
		var prev Grant
		for i, g := range gs {
			if i > 0 && g.AcquiredMs < prevEnd {
				over := time.Duration(prevEnd-g.AcquiredMs) * time.Millisecond
				maxOverlap = max(maxOverlap, over)
				if prevEnd-g.AcquiredMs > OverlapSlack {
					vs = append(vs, Violation{"overlap", fmt.Sprintf(
						"key %s: fence %s (worker %d) acquired %v before fence %s (worker %d) ended",
						lock.HashKey(key), g.Fence, g.Worker, over, prev.Fence, prev.Worker)})
				}
			}
			if e := g.EndMs(); e > prevEnd {
				prevEnd, prev = e, g
			}
		}
	}
	return vs, maxOverlap
}

// CheckRegister re-checks the fenced register from its log: per key, a
// write is accepted if and only if its fence is at least the highest
// accepted before it. It returns the violations and the number of stale
// writes (fence below the highest accepted) seen in the log.
func CheckRegister(log []Write) (vs []Violation, stale int) {
	highest := map[string]lock.Fence{}
	for i, w := range log {
		isStale := w.Fence < highest[w.Key]
		if isStale {
			stale++
		}
		switch {
		case isStale && w.Accepted:
			vs = append(vs, Violation{"register", fmt.Sprintf("write %d: stale fence %s accepted over %s", i, w.Fence, highest[w.Key])})
		case !isStale && !w.Accepted:
			vs = append(vs, Violation{"register", fmt.Sprintf("write %d: current fence %s rejected", i, w.Fence)})
		}
		if w.Accepted && w.Fence > highest[w.Key] {
			highest[w.Key] = w.Fence
		}
	}
	return vs, stale
}

func byKey(grants []Grant) map[string][]Grant {
	m := map[string][]Grant{}
	for _, g := range grants {
		m[g.Key] = append(m[g.Key], g)
	}
	return m
}
