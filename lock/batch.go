package lock

import (
	"context"
	"time"
)

// BatchExtender is an optional Backend interface: extend many leases in
// one round trip. [Keep] detects it with a type assertion and then keeps
// all the leases of that backend alive from one scheduler goroutine.
type BatchExtender interface {
	// ExtendBatch extends every lease in reqs; results[i] is for reqs[i],
	// with the same meaning as Extend's results (the new expiry, or an
	// error matching ErrNotHeld, or a system error). A system error for the
	// whole batch may be returned in every result. It must return exactly
	// len(reqs) results; a missing result counts as a transient error.
	ExtendBatch(ctx context.Context, reqs []ExtendRequest) []ExtendResult
}

// ExtendRequest is one lease to extend in a [BatchExtender.ExtendBatch]
// call, with the arguments of Backend.Extend.
type ExtendRequest struct {
	// ID is the lock id of the lease ([Lease.ID]).
	ID string
	// TTL is how long the lease is to live from the extension on, by the
	// backend's clock (the lease's own TTL when Keep sends it).
	TTL time.Duration
}

// ExtendResult is the outcome of one [ExtendRequest], with the results of
// Backend.Extend.
type ExtendResult struct {
	// ExpiresAt is the lease's new expiry by the backend's clock; zero
	// when Err is set.
	ExpiresAt time.Time
	// Err is nil when the lease was extended, an error matching
	// [ErrNotHeld] when the lease is gone, expired or someone else's, or a
	// system error (an [*Error]), which Keep retries while the lease may
	// still be live.
	Err error
}
