package gocronlock

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// run is one run of a job.
type run struct {
	l         *Locker
	jobCtx    context.Context
	start     time.Time // the window counts from here
	held      context.Context
	lease     lock.Lease
	releaseFn func() error
	mark      bool // the release leaves the done marker
}

// Unlock releases the lease and, with a window, leaves the done marker.
// It returns an error matching lock.ErrLeaseLost when the lease was lost.
func (r *run) Unlock(context.Context) error {
	r.l.untrack(r)
	return r.releaseFn()
}

// release releases the lease, with the marker when the run happened and
// some window is left. It is safe to repeat.
func (r *run) release(ctx context.Context, l lock.Lease, _ error) error {
	left := r.l.window - time.Since(r.start)
	if !r.mark || left < time.Millisecond {
		return r.l.b.Release(ctx, l.ID)
	}
	return r.l.rec.ReleaseDone(ctx, l, left)
}
