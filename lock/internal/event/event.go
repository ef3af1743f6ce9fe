// Package event runs a term of lock/election's Lead as an event through
// the hooks of a backend from lock.WithHooks. It builds on lock.Emit.
package event

import (
	"context"

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
