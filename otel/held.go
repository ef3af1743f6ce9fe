package otellock

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Bounds of the held-duration bookkeeping.
const (
	// heldSlack is how long past its expiry (by the backend's clock) an
	// entry is kept: the lease's own liveness tolerance plus room for a
	// local clock behind the backend's.
	heldSlack = lockdriver.TimeTolerance + 5*time.Second
	// heldMinSweep is the size below which entries are never swept.
	heldMinSweep = 1024
	// heldMax is the hard cap on entries: past it, new leases go
	// unmeasured until a sweep makes room.
	heldMax = 1 << 16
	// heldFullSweepEvery spaces the sweeps made while the map is full, so
	// a full map costs one sweep per interval rather than one per Acquire.
	heldFullSweepEvery = time.Second
)

// heldTracker remembers when each lease acquired through the hook was
// granted, by lock id, so that its release can record the held duration.
// A caller that never releases (or releases elsewhere) must not grow it
// without bound: entries whose lease has expired are swept lazily, when
// the map has doubled since the last sweep, and it never holds more than
// heldMax entries.
type heldTracker struct {
	m         sync.Map // lock id -> *heldEntry
	n         atomic.Int64
	nextSweep atomic.Int64 // size at which add sweeps next
	lastSweep atomic.Int64 // unix nanoseconds of the last sweep
	sweeping  sync.Mutex
}

type heldEntry struct {
	acquired time.Time
	expires  atomic.Int64 // unix nanoseconds of the lease's expiry, plus heldSlack
}

func newHeldTracker() *heldTracker {
	t := &heldTracker{}
	t.nextSweep.Store(heldMinSweep)
	return t
}

// add records lease l, granted at acquired.
func (t *heldTracker) add(l lock.Lease, acquired time.Time) {
	if n := t.n.Load(); n >= t.nextSweep.Load() || n >= heldMax {
		if n < heldMax || acquired.UnixNano()-t.lastSweep.Load() >= int64(heldFullSweepEvery) {
			t.sweep(acquired)
		}
		if t.n.Load() >= heldMax {
			return
		}
	}
	e := &heldEntry{acquired: acquired}
	e.expires.Store(l.ExpiresAt.Add(heldSlack).UnixNano())
	if _, loaded := t.m.LoadOrStore(l.ID, e); !loaded {
		t.n.Add(1)
	}
}

// extend moves the expiry of lease id.
func (t *heldTracker) extend(id string, expiresAt time.Time) {
	if v, ok := t.m.Load(id); ok {
		v.(*heldEntry).expires.Store(expiresAt.Add(heldSlack).UnixNano())
	}
}

// remove forgets lease id and returns when it was granted.
func (t *heldTracker) remove(id string) (acquired time.Time, ok bool) {
	v, ok := t.m.LoadAndDelete(id)
	if !ok {
		return time.Time{}, false
	}
	t.n.Add(-1)
	return v.(*heldEntry).acquired, true
}

// sweep drops the entries whose lease has expired by now. One sweep runs
// at a time; callers that find one running go on without waiting.
func (t *heldTracker) sweep(now time.Time) {
	if !t.sweeping.TryLock() {
		return
	}
	defer t.sweeping.Unlock()
	cutoff := now.UnixNano()
	t.lastSweep.Store(cutoff)
	t.m.Range(func(k, v any) bool {
		if v.(*heldEntry).expires.Load() < cutoff {
			if _, ok := t.m.LoadAndDelete(k); ok {
				t.n.Add(-1)
			}
		}
		return true
	})
	t.nextSweep.Store(max(heldMinSweep, 2*t.n.Load()))
}

// len returns the number of entries.
func (t *heldTracker) len() int { return int(t.n.Load()) }
