package gocronlock

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// run is one run of a job: the gocron.Lock that Locker.Lock returns.
type run struct {
	l         *Locker
	jobCtx    context.Context
	start     time.Time // before the acquisition: the window counts from here
	held      context.Context
	lease     lock.Lease
	releaseFn func() error
	mark      bool // the run happened: its release leaves the done marker
}

// Unlock ends the run: it releases the lease and, with a window, marks
// the job done for what is left of the window, in one step. gocron calls
// it after the run. It returns an error matching lock.ErrLeaseLost when
// the lease was lost during the run.
func (r *run) Unlock(context.Context) error {
	r.l.untrack(r)
	return r.releaseFn()
}

// release is the lease's release (lock.WithReleaseFunc): with the marker
// when the run happened and some of the window is left, else a plain one.
// It is safe to repeat, as lock.Hold may after a transient failure.
func (r *run) release(ctx context.Context, l lock.Lease, _ error) error {
	left := r.l.window - time.Since(r.start)
	if !r.mark || left < time.Millisecond {
		return r.l.b.Release(ctx, l.ID)
	}
	return r.l.rec.ReleaseDone(ctx, l, left)
}
