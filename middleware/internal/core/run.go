package core

import (
	"context"
	"errors"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Run runs next while holding the lock on key (from [Guard.Key]), through
// lock.Do: next's context carries the lease (lock.LeaseFrom) and is
// cancelled with a cause matching lock.ErrLeaseLost when the lease is lost;
// the lease is released when next returns or panics (the panic goes on).
//
// next runs at most once. When it ran, Run returns ran == true and next's
// error unchanged; a lease lost after next returned nil is logged, not
// returned, because next's answer is already given. When it did not run,
// err says why: it matches lock.ErrLocked when the key is busy, and is
// otherwise the backend's error (or the caller's cancellation, with
// lock.CodeAborted). With FailOpen, a backend failure runs next without a
// lease instead; invalid keys and cancellations never do.
func (g *Guard) Run(ctx context.Context, key string, next func(ctx context.Context) error) (ran bool, err error) {
	var nextErr error
	err = lock.Do(ctx, g.b, key, func(held context.Context, _ lock.Lease) error {
		ran = true
		nextErr = next(held)
		return nextErr
	}, g.opts...)
	switch {
	case ran:
		if nextErr == nil && err != nil {
			logOf(ctx).WarnContext(ctx, "syncguard: lease lost while the handler ran; its work may not have been exclusive",
				"key_hash", lockdriver.HashKey(key), "error", err)
		}
		return true, nextErr
	case err == nil:
		// lock.Do only returns nil after running fn.
		return false, lockdriver.InvalidArgument("do", "lock.Do returned without running the handler")
	}
	g.logDenied(ctx, key, err)
	switch {
	case g.failOpen && failsOpen(err):
		return true, next(ctx)
	case g.limit != 0 && errors.Is(err, lock.ErrLocked):
		return false, limited(err)
	}
	return false, err
}

// failsOpen reports whether err is a backend failure that FailOpen lets
// through: not contention, not a bad key, not the caller going away.
func failsOpen(err error) bool {
	if errors.Is(err, lock.ErrLocked) {
		return false
	}
	switch lock.CodeOf(err) {
	case lock.CodeInvalidArgument, lock.CodeAborted:
		return false
	}
	return !errors.Is(err, context.Canceled)
}
