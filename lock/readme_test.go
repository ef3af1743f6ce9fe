package lock_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Regions quoted by docs/backends.md (testkit/readme checks them).

// README: backends-hook
// slowOps is a lock.Hook that logs every backend operation that takes
// longer than limit, and every lease a release handed to a waiter.
type slowOps struct{ limit time.Duration }

func (h slowOps) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		start := time.Now()
		err := next(ctx, op) // runs the operation; op holds its results after
		if d := time.Since(start); d > h.limit && op.Kind != lock.OpWait {
			slog.WarnContext(ctx, "slow lock operation", "op", op.Kind.String(), "took", d)
		}
		if op.HandedTo != "" { // a release handed the lock to a waiter
			slog.DebugContext(ctx, "handed over", "fence", op.HandedTo.String())
		}
		return err
	}
}

// END README

func exampleHooked(b lock.Backend) lock.Backend {
	// README: backends-wrap
	b = lock.WithHooks(b, slowOps{limit: 50 * time.Millisecond})
	// END README
	return b
}

func TestReadmeHook(t *testing.T) {
	b := exampleHooked(newFake())
	if err := lock.Do(context.Background(), b, "k", func(context.Context, lock.Lease) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// invoices is the store of the package doc's example.
type invoices interface {
	UpdateInvoice(ctx context.Context, id int, fence lock.Fence) error
}

func exampleDoc(ctx context.Context, backend lock.Backend, store invoices) error {
	// README: lock-doc
	err := lock.Do(ctx, backend, "invoice:42", func(ctx context.Context, l lock.Lease) error {
		return store.UpdateInvoice(ctx, 42, l.Fence) // the store refuses older fences
	})
	// END README
	return err
}

var _ = exampleDoc
