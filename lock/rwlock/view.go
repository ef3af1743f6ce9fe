package rwlock

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// view is a read-write Backend seen, in one mode, as the lock.IDBackend
// that lock.Acquire, Do, Hold and Keep drive: its attempts are AcquireRW
// and its waiters JoinRW's, so a read-write lock has the plain lock's
// retries, queue, keep-alive, release and errors, written once in lock.
// Its operations run through the hooks of b, the backend the caller
// passed, with the mode on the Op.
type view struct {
	b    lock.Backend // as given, hooks and all
	rw   Backend      // b's read-write Backend
	mode Mode
	last lock.Lease // the last lease an attempt returned: another came by a hand-off
}

var _ lock.IDBackend = (*view)(nil)

// emit runs op through b's hooks, then body (a hooked release runs the
// wrapped backend's Release instead).
func (v *view) emit(ctx context.Context, op *lock.Op, body lock.OpFunc) error {
	op.Mode = v.mode.String()
	return lock.Emit(ctx, v.b, op, body)
}

// reportLoss tells b's hooks of an OpLeaseLost, once, as Keep does for a
// lock, when held ends because l was lost. It returns the function to call
// before the release, whose end of held is no loss.
func (v *view) reportLoss(ctx, held context.Context, l lock.Lease) (end func()) {
	var state atomic.Int32 // 0 holding, 1 released, 2 reported
	report := func() {
		if cause := context.Cause(held); errors.Is(cause, lock.ErrLeaseLost) && state.CompareAndSwap(0, 2) {
			_ = v.emit(ctx, &lock.Op{Kind: lock.OpLeaseLost, Key: l.Key, ID: l.ID, TTL: l.TTL, Lease: l, Err: cause}, nil)
		}
	}
	context.AfterFunc(held, report)
	return func() {
		if held.Err() != nil {
			report() // lost before the release: the AfterFunc may not have run yet
		}
		state.CompareAndSwap(0, 1)
	}
}

// Acquire is AcquireID with a fresh lock id.
func (v *view) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	id, err := v.rw.NewLockID(key)
	if err != nil {
		return lock.Lease{}, err
	}
	return v.AcquireID(ctx, key, id, ttl)
}

// AcquireID is AcquireRW in v's mode.
func (v *view) AcquireID(ctx context.Context, key, id string, ttl time.Duration) (lock.Lease, error) {
	op := &lock.Op{Kind: lock.OpAcquire, Key: key, ID: id, TTL: ttl}
	err := v.emit(ctx, op, func(ctx context.Context, op *lock.Op) (err error) {
		op.Lease, err = v.rw.AcquireRW(ctx, key, id, v.mode, ttl)
		return err
	})
	if err == nil {
		v.last = op.Lease
	}
	return op.Lease, err
}

// AcquireSlot refuses: a read-write lock is not a limit.
func (v *view) AcquireSlot(context.Context, string, string, int, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, lockdriver.InvalidArgument("acquire", "lock.WithLimit does not apply to a read-write lock")
}

// Join is JoinRW in v's mode, whose attempts run through b's hooks.
func (v *view) Join(key, id string, _ int, ttl, wait time.Duration) (lock.Waiter, error) {
	w, err := v.rw.JoinRW(key, id, v.mode, ttl, wait)
	if err != nil {
		return nil, err
	}
	return &waiter{Waiter: w, v: v, key: key, id: id, ttl: ttl}, nil
}

// Release frees the holder id.
func (v *view) Release(ctx context.Context, id string) error {
	return v.emit(ctx, &lock.Op{Kind: lock.OpRelease, ID: id}, func(ctx context.Context, _ *lock.Op) error {
		return v.rw.Release(ctx, id)
	})
}

// Extend extends the holder id.
func (v *view) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	op := &lock.Op{Kind: lock.OpExtend, ID: id, TTL: ttl}
	err := v.emit(ctx, op, func(ctx context.Context, op *lock.Op) (err error) {
		op.ExpiresAt, err = v.rw.Extend(ctx, id, ttl)
		return err
	})
	return op.ExpiresAt, err
}

// ExtendBatch is b's: the keep-alive scheduler of b's Locals may batch
// other leases of b with v's.
func (v *view) ExtendBatch(ctx context.Context, leases []lock.Lease) []lock.ExtendResult {
	if ib, ok := v.b.(lock.IDBackend); ok {
		return ib.ExtendBatch(ctx, leases)
	}
	return v.rw.ExtendBatch(ctx, leases)
}

// NewLockID is the read-write Backend's.
func (v *view) NewLockID(key string) (string, error) { return v.rw.NewLockID(key) }

// IsLocked is b's.
func (v *view) IsLocked(ctx context.Context, key string) (bool, error) { return v.b.IsLocked(ctx, key) }

// LookupKey is b's.
func (v *view) LookupKey(ctx context.Context, key string) (*lock.Info, error) {
	return v.b.LookupKey(ctx, key)
}

// LookupID is b's.
func (v *view) LookupID(ctx context.Context, id string) (*lock.Info, error) {
	return v.b.LookupID(ctx, id)
}

// LookupLimit is the read-write Backend's.
func (v *view) LookupLimit(ctx context.Context, key string) (*lock.LimitInfo, error) {
	return v.rw.LookupLimit(ctx, key)
}

// Capabilities is b's.
func (v *view) Capabilities() lock.Capabilities { return v.b.Capabilities() }

// Locals is b's, so that v's leases join b's keep-alive scheduler.
func (v *view) Locals() *lock.Locals {
	if l, ok := v.b.(interface{ Locals() *lock.Locals }); ok {
		return l.Locals()
	}
	return nil
}

// waiter is a JoinRW waiter whose attempts run through b's hooks.
type waiter struct {
	lock.Waiter
	v       *view
	key, id string
	ttl     time.Duration
}

// Attempt runs the waiter's attempt as an OpAcquire with the mode.
func (w *waiter) Attempt(ctx context.Context) (lock.Lease, error) {
	op := &lock.Op{Kind: lock.OpAcquire, Key: w.key, ID: w.id, TTL: w.ttl, Queued: true}
	err := w.v.emit(ctx, op, func(ctx context.Context, op *lock.Op) (err error) {
		op.Lease, err = w.Waiter.Attempt(ctx)
		return err
	})
	if err == nil {
		w.v.last = op.Lease
	}
	return op.Lease, err
}

// LeaveWait is the wrapped waiter's, or its Leave(false) (see lock.Waiter).
func (w *waiter) LeaveWait(ctx context.Context) error {
	if lw, ok := w.Waiter.(interface{ LeaveWait(context.Context) error }); ok {
		return lw.LeaveWait(ctx)
	}
	w.Waiter.Leave(false)
	return nil
}
