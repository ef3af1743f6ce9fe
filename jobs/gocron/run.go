package gocronlock

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

// run is one run of a job.
type run struct {
	l         *Locker
	jobCtx    context.Context
	start     time.Time // when Lock was called, by this process's clock
	fired     time.Time // the same instant by the backend's clock
	held      context.Context
	lease     lock.Lease
	releaseFn func() error
	mark      bool // the release leaves the run's record
}

// claim decides, holding the lease, whether this firing runs: not when
// the job's record says another instance fired it within the window of
// this firing. Both firings are by the backend's clock: the lease's grant
// (its expiry less its TTL) less the time the call took, so that a call
// delayed by a stalled backend counts from when it was made.
func (r *run) claim() error {
	took := time.Since(r.start)
	if took >= r.lease.TTL {
		return ErrLate // the record of a run this firing shares may be gone
	}
	r.fired = r.lease.ExpiresAt.Add(-r.lease.TTL - took)
	b, found, err := r.l.rec.Record(r.held, r.lease.Key)
	if err != nil {
		return err
	}
	if found {
		last, err := wire.DecodeJobRun(b)
		if err == nil && r.fired.Before(last.Fired.Add(r.l.window)) {
			return ErrDone
		}
	}
	r.mark = true
	return nil
}

// Unlock releases the lease and, with a window, leaves the run's record.
// It returns an error matching lock.ErrLeaseLost when the lease was lost.
func (r *run) Unlock(context.Context) error {
	r.l.untrack(r)
	return r.releaseFn()
}

// release releases the lease, with the run's record when the run
// happened. The record lives until the window and the lease's TTL have
// passed since the firing: every firing within the window that claim
// does not refuse as late then finds it. It is safe to repeat.
func (r *run) release(ctx context.Context, l lock.Lease, _ error) error {
	left := r.l.window + l.TTL - time.Since(r.start)
	if !r.mark || left < time.Millisecond {
		return r.l.b.Release(ctx, l.ID)
	}
	return r.l.rec.ReleaseRecord(ctx, l, wire.JobRun{Fence: l.Fence, Fired: r.fired}.Encode(), left)
}
