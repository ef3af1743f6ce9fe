// Package event lets the packages built on lock emit, through the hooks of
// a backend from lock.WithHooks, the events lock defines for them but
// exports no way to emit: a term of lock/election's Lead. lock registers
// the implementation in lock/internal/contract; this package types it.
package event

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// Term runs run, the work of identity's term under lease l, as a
// lock.OpTerm event through the hooks of b when b comes from
// lock.WithHooks, and just calls run otherwise. ctx is the term's context
// (it ends when the term is lost); run gets it, or what the hooks derived
// from it. The hooks' next returns why the term ended; Term returns run's
// error (or a hook's, when a hook did not let run start).
func Term(ctx context.Context, b lock.Backend, l lock.Lease, identity string, run func(ctx context.Context) error) error {
	return contract.Term(ctx, b, l, identity, run)
}
