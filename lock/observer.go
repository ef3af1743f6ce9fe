package lock

import (
	"context"
	"time"
)

// Observer is an optional interface for a Backend, typically a decorator
// such as otellock's, that wants to see what Acquire, Do and Keep do
// around the backend calls: the whole wait for a busy key with each
// attempt, and the loss of a lease. Acquire, Do and Keep detect it with a
// type assertion on the Backend they are given; there is nothing to
// configure. Implementations must be safe for concurrent use and fast.
type Observer interface {
	// ObserveAcquire is called when Acquire (or Do) starts to acquire key.
	// The returned context is used for the attempts, so spans started by
	// the backend's Acquire nest under a span started here. The returned
	// AcquireObserver must not be nil.
	ObserveAcquire(ctx context.Context, key string) (context.Context, AcquireObserver)
	// ObserveLeaseLost is called once when Keep finds the lease l lost;
	// err matches ErrLeaseLost.
	ObserveLeaseLost(ctx context.Context, l Lease, err error)
}

// AcquireObserver receives the attempts and the outcome of one acquisition.
type AcquireObserver interface {
	// Attempt is called after every attempt that did not get the lock:
	// attempt counts from 1, err is the attempt's error (contention
	// matches ErrLocked), and wait is the longest delay before the next
	// attempt (a release notification may end it early; 0 when Acquire
	// gives up or, having just started to watch the key, looks again at
	// once).
	Attempt(attempt int, err error, wait time.Duration)
	// Done is called once with the outcome: the lease, or the error that
	// Acquire returns.
	Done(l Lease, err error)
}

// observeAcquire starts observing an acquisition when b is an Observer.
func observeAcquire(ctx context.Context, b Backend, key string) (context.Context, AcquireObserver) {
	if o, ok := b.(Observer); ok {
		return o.ObserveAcquire(ctx, key)
	}
	return ctx, nil
}
