// Package event lets the packages built on lock emit, through the hooks of
// a backend from lock.WithHooks, the events lock defines for them but
// exports no way to emit: a term of lock/election's Lead, and the wait of
// its candidates. lock registers
// the implementation in lock/internal/contract; this package types it.
package event

import (
	"context"
	"time"

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

// Wait runs run, an acquisition of key for ttl that its caller runs
// itself (lock/election's campaign), as a lock.OpWait event through the
// hooks of b when b comes from lock.WithHooks, as lock.Acquire runs its
// own; it just calls run otherwise.
func Wait(ctx context.Context, b lock.Backend, key string, ttl time.Duration, run func(ctx context.Context) (lock.Lease, error)) (lock.Lease, error) {
	l, err := contract.Wait(ctx, b, key, ttl, func(ctx context.Context) (any, error) { return run(ctx) })
	lease, _ := l.(lock.Lease)
	return lease, err
}

// Granted tells the hooks of b, when b comes from lock.WithHooks, of the
// lease l a release handed to the caller's waiter (lock.OpGranted), under
// ctx, the context Wait gave run.
func Granted(ctx context.Context, b lock.Backend, l lock.Lease) { contract.Granted(ctx, b, l) }

// Wrapped returns the backend that b's hooks wrap when b comes from
// lock.WithHooks, else nil: for the extensions lock's hooks do not carry
// (lock/election's Store).
func Wrapped(b lock.Backend) lock.Backend {
	w, _ := contract.Wrapped(b).(lock.Backend)
	return w
}
