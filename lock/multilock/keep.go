package multilock

import (
	"context"
	"errors"

	"github.com/syncguard-go/syncguard/lock"
)

// A lease is kept alive from the moment it is taken, also while the
// acquisition waits for later keys: a wait may outlast the TTL.

// kept is one lease's heartbeat (lock.Keep).
type kept struct {
	lease lock.Lease
	held  context.Context // ends with lock.ErrLeaseLost when the lease is lost
	stop  func() error
}

// hold records l as the lease of key i and keeps it alive, unless it is
// the lease already kept there (an attempt that found its own lease).
func (a *acquisition) hold(ctx context.Context, i int, l lock.Lease) {
	if k := a.keeps[i]; k != nil {
		if k.lease.ID == l.ID && k.lease.Fence == l.Fence {
			a.leases[i] = l
			return
		}
		_ = k.stop()
	}
	held, stop := lock.Keep(ctx, a.s.b, l, a.opts...)
	a.leases[i], a.ids[i] = l, l.ID
	a.keeps[i] = &kept{lease: l, held: held, stop: stop}
}

// drop stops keeping key i's lease and forgets it and its id.
func (a *acquisition) drop(i int) {
	if k := a.keeps[i]; k != nil {
		_ = k.stop()
		a.keeps[i] = nil
	}
	a.leases[i], a.ids[i] = lock.Lease{}, ""
}

// firstLost returns the first key before hi whose lease was lost while
// the acquisition went on, or -1. Its id is never sent again: a new
// lease of the key gets a new id.
func (a *acquisition) firstLost(hi int) int {
	for i := range hi {
		if k := a.keeps[i]; k != nil && errors.Is(context.Cause(k.held), lock.ErrLeaseLost) {
			return i
		}
	}
	return -1
}

// groupOf returns the index of the group of key i.
func (a *acquisition) groupOf(i int) int {
	for g, r := range a.groups {
		if i < r[1] {
			return g
		}
	}
	return len(a.groups) - 1
}
