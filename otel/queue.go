package otellock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

var _ lock.Queuer = (*backend)(nil)

// Join implements lock.Queuer: it forwards to the wrapped backend when
// that is a lock.Queuer (each Attempt observed as an acquire, like
// AcquireID), so waiters keep their place in the key's queue and get the
// lock handed over; otherwise it returns an error matching
// errors.ErrUnsupported, and lock.Acquire waits as it would for the
// wrapped backend.
func (w *backend) Join(key, id string, ttl, wait time.Duration) (lock.Waiter, error) {
	q, ok := w.next.(lock.Queuer)
	if !ok {
		return nil, fmt.Errorf("otellock: the wrapped backend does not queue waiters: %w", errors.ErrUnsupported)
	}
	next, err := q.Join(key, id, ttl, wait)
	if err != nil {
		return nil, err
	}
	return &waiter{Waiter: next, b: w, key: key, ttl: ttl}, nil
}

// waiter observes the attempts of a wrapped lock.Waiter. A lease handed
// over through its Granted channel is observed by the wait it belongs to
// (see waitObserver.Done).
type waiter struct {
	lock.Waiter
	b     *backend
	key   string
	ttl   time.Duration
	limit int // the n of a slot's waiter (JoinSlot); 0 for the lock
}

// Attempt calls the wrapped waiter's Attempt in a "syncguard.acquire"
// span.
func (q *waiter) Attempt(ctx context.Context) (lock.Lease, error) {
	return q.b.acquire(ctx, q.key, q.ttl, q.limit, q.Waiter.Attempt)
}
