package multilock_test

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/multilock"
)

// Regions quoted by doc.go and docs/multikey.md (testkit/readme checks
// them).

// accounts is the store the snippets write to.
type accounts interface {
	Transfer(ctx context.Context, from, to, amount int, fromFence, toFence lock.Fence) error
}

func exampleDoc(ctx context.Context, backend lock.Backend, store accounts, amount int) error {
	// README: multilock-doc
	err := multilock.Do(ctx, backend, []string{"{acct}:1", "{acct}:2"}, func(ctx context.Context, leases []lock.Lease) error {
		// leases[i] holds keys[i]; pass each key's fence with its writes.
		return store.Transfer(ctx, 1, 2, amount, leases[0].Fence, leases[1].Fence)
	})
	// END README
	return err
}

func exampleGuide(ctx context.Context, backend lock.Backend, store accounts, amount int) error {
	// README: multikey-do
	keys := []string{"{acct}:1", "{acct}:2"}
	err := multilock.Do(ctx, backend, keys, func(ctx context.Context, leases []lock.Lease) error {
		// leases[i] holds keys[i]. ctx ends (cause lock.ErrLeaseLost) if any is lost.
		return store.Transfer(ctx, 1, 2, amount, leases[0].Fence, leases[1].Fence)
	}, lock.WithTTL(10*time.Second))
	// END README
	return err
}

var _, _ = exampleDoc, exampleGuide
