package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func ExampleHashKey() {
	fmt.Println(lockdriver.HashKey("resource:123"))
	// Output: e90a28c676a29a3291e2874a
}

func ExampleFence_Compare() {
	older, newer := lock.Fence("000000000000009"), lock.Fence("000000000000010")
	// Fixed width: string order is numeric order ("9" > "10" would not be).
	fmt.Println(older.Compare(newer), newer.Compare(older), older < newer)
	// Output: -1 1 true
}

func ExampleDo() {
	var b lock.Backend = newFake() // in production: a redisbackend.Backend
	err := lock.Do(context.Background(), b, "invoice:42", func(ctx context.Context, l lock.Lease) error {
		// Pass l.Fence with every write so the store can reject stale holders.
		fmt.Println("fence", l.Fence)
		return nil
	})
	fmt.Println(err)
	// Output:
	// fence 000000000000001
	// <nil>
}

// Hold is Do without the callback: the context is the lock. Deferring
// release ends it; data-layer code reads the fence with LeaseFrom.
func ExampleHold() {
	var b lock.Backend = newFake() // in production: a redisbackend.Backend
	held, _, release, err := lock.Hold(context.Background(), b, "invoice:42")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer release()
	l, _ := lock.LeaseFrom(held) // pass l.Fence with every write
	fmt.Println("fence", l.Fence, "held", held.Err() == nil)
	// Output: fence 000000000000001 held true
}

// A busy key gives a *LockedError, which matches ErrLocked and tells when
// the holder's lease expires (for a Retry-After hint).
func ExampleLockedError() {
	var b lock.Backend = newFake() // in production: a redisbackend.Backend
	ctx := context.Background()
	held, _ := b.Acquire(ctx, "invoice:42", time.Minute)
	defer b.Release(ctx, held.ID)

	_, err := b.Acquire(ctx, "invoice:42", time.Minute)
	var le *lock.LockedError
	if errors.As(err, &le) {
		fmt.Println(errors.Is(err, lock.ErrLocked), "retry in", time.Until(le.ExpiresAt).Round(time.Minute))
	}
	// Output: true retry in 1m0s
}

// A hook sees every operation on the backend and the events of Acquire,
// Do, Hold and Keep around them; otellock is such a hook. This one prints
// each operation and its error.
func ExampleWithHooks() {
	b := lock.WithHooks(newFake(), logOps{}) // in production: a redisbackend.Backend
	err := lock.Do(context.Background(), b, "invoice:42", func(context.Context, lock.Lease) error {
		return nil
	})
	fmt.Println(err)
	// Output:
	// acquire <nil>
	// wait <nil>
	// release <nil>
	// <nil>
}

// logOps is a lock.Hook that prints each operation and its error.
type logOps struct{}

func (logOps) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		err := next(ctx, op) // runs the operation (for a wait: every attempt)
		fmt.Println(op.Kind, err)
		return err
	}
}

// A Retry is the whole schedule of a wait; its zero fields take the
// defaults. Here: two retries 10ms apart, no jitter. A negative delay is
// rejected before any attempt.
func ExampleWithRetry() {
	var b lock.Backend = newFake() // in production: a redisbackend.Backend
	ctx := context.Background()
	held, _ := b.Acquire(ctx, "invoice:42", time.Minute)
	defer b.Release(ctx, held.ID)

	_, err := lock.Acquire(ctx, b, "invoice:42", lock.WithRetry(lock.Retry{
		MaxRetries: 2,
		BaseDelay:  10 * time.Millisecond,
		Fixed:      true,
		NoJitter:   true,
	}))
	fmt.Println(err)

	err = lockdriver.ValidateOptions(lock.WithRetry(lock.Retry{BaseDelay: -time.Second}))
	fmt.Println(lock.CodeOf(err), err)
	// Output:
	// syncguard: acquire: AcquisitionTimeout: key still locked after 3 attempts: syncguard: locked
	// InvalidArgument syncguard: config: InvalidArgument: delays must not be negative
}
