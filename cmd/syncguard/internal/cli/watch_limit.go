package cli

import "github.com/syncguard-go/syncguard/lock"

// heldLimit is a limit with live slots in a watch sample.
type heldLimit struct {
	key     string
	fences  map[lock.Fence]bool // its live slots
	waiters int64
}

// newHeldLimit is l as a watch sample keeps it.
func newHeldLimit(l limitData) heldLimit {
	h := heldLimit{key: l.key, fences: make(map[lock.Fence]bool, len(l.slots)), waiters: l.waiters}
	for _, s := range l.slots {
		h.fences[s.fence] = true
	}
	return h
}

// limitActivity counts the slot grants of the limits between two samples
// by their slots' fences, by lock key: a fence that appeared was granted.
// A slot taken and freed between two samples is not seen here (its new
// lock id is: sample.byLock).
func limitActivity(prev, cur sample) map[string]activity {
	m := map[string]activity{}
	for k, c := range cur.limits {
		p := prev.limits[k]
		var n int64
		for f := range c.fences {
			if !p.fences[f] {
				n++
			}
		}
		m[k] = activity{key: c.key, acquired: n, waiters: c.waiters}
	}
	return m
}

// slotCount is the number of live slots of a sample's limits.
func (s sample) slotCount() int {
	n := 0
	for _, l := range s.limits {
		n += len(l.fences)
	}
	return n
}
