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

// compareLimits counts the slot grants and releases of the limits between
// two samples by their slots' fences: a fence that appeared was granted, one
// that vanished was released (or expired). A slot taken and freed between
// two samples is not seen: the counts are lower bounds.
func compareLimits(prev, cur sample) (acquired, released int64, busy []activity) {
	for k, c := range cur.limits {
		p := prev.limits[k]
		var n int64
		for f := range c.fences {
			if !p.fences[f] {
				n++
			}
		}
		for f := range p.fences {
			if !c.fences[f] {
				released++
			}
		}
		acquired += n
		if n > 0 || c.waiters > 0 {
			busy = append(busy, activity{key: c.key, acquired: n, waiters: c.waiters})
		}
	}
	for k, p := range prev.limits {
		if _, ok := cur.limits[k]; !ok {
			released += int64(len(p.fences))
		}
	}
	return acquired, released, busy
}

// slotCount is the number of live slots of a sample's limits.
func (s sample) slotCount() int {
	n := 0
	for _, l := range s.limits {
		n += len(l.fences)
	}
	return n
}
