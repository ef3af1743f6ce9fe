// Package event emits, through the hooks of a backend from
// lock.WithHooks, the events of lock/election: a term, and the wait of a
// candidate and its hand-off. It builds on lock.Emit.
package event

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Term runs run, the work of identity's term under lease l, as a
// lock.OpTerm event through the hooks of b, and just calls run when b has
// none. ctx is the term's context: it ends when the term is lost. The
// hooks' next returns why the term ended; Term returns run's error, or a
// hook's when the hook did not let run start.
func Term(ctx context.Context, b lock.Backend, l lock.Lease, identity string, run func(ctx context.Context) error) error {
	var ran bool
	var runErr error
	op := &lock.Op{Kind: lock.OpTerm, Key: l.Key, ID: l.ID, TTL: l.TTL, Lease: l, Identity: identity}
	err := lock.Emit(ctx, b, op, func(hctx context.Context, _ *lock.Op) error {
		ran = true
		runErr = run(hctx)
		if cause := context.Cause(ctx); cause != nil {
			return cause // lost, or Lead's context ended: not the work's doing
		}
		return runErr
	})
	if ran {
		return runErr
	}
	return err
}

// Wait runs run, an acquisition of key for ttl, as a lock.OpWait event
// through the hooks of b, as lock.Acquire runs its own.
func Wait(ctx context.Context, b lock.Backend, key string, ttl time.Duration, run func(ctx context.Context) (lock.Lease, error)) (lock.Lease, error) {
	op := &lock.Op{Kind: lock.OpWait, Key: key, TTL: ttl}
	err := lock.Emit(ctx, b, op, func(ctx context.Context, op *lock.Op) (err error) {
		op.Lease, err = run(ctx)
		return err
	})
	switch {
	case err != nil:
		return lock.Lease{}, err
	case op.Lease.ID == "":
		return lock.Lease{}, &lock.Error{Code: lock.CodeInternal, Op: "acquire", Msg: "a hook returned from OpWait without running the acquisition"}
	}
	return op.Lease, nil
}

// Granted tells the hooks of b of the lease l a release handed to the
// caller's waiter (lock.OpGranted), under ctx, the context Wait gave run.
func Granted(ctx context.Context, b lock.Backend, l lock.Lease) {
	_ = lock.Emit(ctx, b, &lock.Op{Kind: lock.OpGranted, Key: l.Key, ID: l.ID, TTL: l.TTL, Lease: l}, nil)
}
