package cli

import "github.com/syncguard-go/syncguard/lock"

// heldLimit is a limit with live slots in a watch sample, or a read-write
// lock with live holders.
type heldLimit struct {
	key     string
	fences  map[lock.Fence]bool // its live slots or holders
	waiters int64
	rw      bool       // a read-write lock (lock/rwlock)
	writer  lock.Fence // the fence of a read-write lock's writer; "" when readers hold it
}

// newHeldLimit is l as a watch sample keeps it.
func newHeldLimit(l limitData) heldLimit {
	h := heldLimit{key: l.key, fences: make(map[lock.Fence]bool, len(l.slots)), waiters: l.waiters, rw: l.rw}
	for _, s := range l.slots {
		h.fences[s.fence] = true
		if s.mode == 'w' {
			h.writer = s.fence
		}
	}
	return h
}

// readers is the number of the read-write lock's live readers.
func (h heldLimit) readers() int {
	if !h.rw || h.writer != "" {
		return 0
	}
	return len(h.fences)
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
