// Package event runs an election term through a backend's hooks.
package event

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
)

// Term runs run as a lock.OpTerm event through b's hooks. It returns
// run's error, or a hook's when run did not start.
func Term(ctx context.Context, b lock.Backend, l lock.Lease, identity string, run func(ctx context.Context) error) error {
	var ran bool
	var runErr error
	op := &lock.Op{Kind: lock.OpTerm, Key: l.Key, ID: l.ID, TTL: l.TTL, Lease: l, Identity: identity}
	err := lock.Emit(ctx, b, op, func(hctx context.Context, _ *lock.Op) error {
		ran = true
		runErr = run(hctx)
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
		return runErr
	})
	if ran {
		return runErr
	}
	return err
}
