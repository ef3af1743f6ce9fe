package chaos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Concurrency limits in the run: workers also take slots of a limit key
// with lock.WithLimit, through the recorder, which forwards lock.Limiter
// and lock.SlotQueuer and records slots like locks (a Grant with its
// Limit).

var (
	_ lock.Limiter    = (*recorder)(nil)
	_ lock.SlotQueuer = (*recorder)(nil)
)

// errNoLimits says the recorded backend has no concurrency limits.
var errNoLimits = fmt.Errorf("chaos: backend has no concurrency limits: %w", errors.ErrUnsupported)

// AcquireSlot forwards to the backend's lock.Limiter and is recorded as an
// Acquire of a slot of n.
func (r *recorder) AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (lock.Lease, error) {
	lim, ok := r.Backend.(lock.Limiter)
	if !ok {
		return lock.Lease{}, errNoLimits
	}
	return r.acquireID(ctx, key, id, n, func() (lock.Lease, error) { return lim.AcquireSlot(ctx, key, id, n, ttl) })
}

// LookupLimit forwards to the backend's lock.Limiter, unrecorded.
func (r *recorder) LookupLimit(ctx context.Context, key string) (*lock.LimitInfo, error) {
	lim, ok := r.Backend.(lock.Limiter)
	if !ok {
		return nil, errNoLimits
	}
	return lim.LookupLimit(ctx, key)
}

// JoinSlot forwards to the backend's lock.SlotQueuer, recorded as Join
// is: attempts as Acquires of a slot, a slot handed over as a grant once
// lock.Acquire took it.
func (r *recorder) JoinSlot(key, id string, n int, ttl, wait time.Duration) (lock.Waiter, error) {
	q, ok := r.Backend.(lock.SlotQueuer)
	if !ok {
		return nil, errNoLimits
	}
	next, err := q.JoinSlot(key, id, n, ttl, wait)
	if err != nil {
		return nil, err
	}
	return r.waiter(next, key, id, n), nil
}
