package lock

import (
	"context"
	"time"
)

// Backend is a store that grants leases on keys. Implementations must be
// safe for concurrent use. Every method validates its input before any I/O
// and returns an [*Error] with [CodeInvalidArgument] for bad input.
type Backend interface {
	// Acquire tries once to take the lock on key for ttl. On contention it
	// returns an error matching [ErrLocked] (a [*LockedError]).
	Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, error)
	// Release frees the lock held under the lease id. It returns an error
	// matching [ErrNotHeld] when the lease is gone, expired or not the
	// current owner's; nothing is deleted then.
	Release(ctx context.Context, id string) error
	// Extend replaces the remaining time of the lease id with ttl, measured
	// from the backend's clock, and returns the new expiry. It returns an
	// error matching [ErrNotHeld] like Release.
	Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error)
	// IsLocked reports whether key is held by a live lease.
	IsLocked(ctx context.Context, key string) (bool, error)
	// LookupKey describes the live lease on key, or returns nil, nil when
	// the key is free or its lease expired.
	LookupKey(ctx context.Context, key string) (*Info, error)
	// LookupID describes the live lease with this id, or returns nil, nil
	// when there is none.
	LookupID(ctx context.Context, id string) (*Info, error)
	// Capabilities describes the backend.
	Capabilities() Capabilities
}

// Lease is a granted lock. Its ID is the secret that releases or extends
// it; treat it like a credential and keep it out of logs.
type Lease struct {
	// Key is the normalised (NFC) user key.
	Key string
	// ID is the lock id: 22 base64url characters from 16 random bytes.
	ID string
	// Fence is this grant's fencing token.
	Fence Fence
	// TTL is the lease duration asked for at Acquire; Keep extends by it.
	TTL time.Duration
	// ExpiresAt is the expiry by the backend's clock.
	ExpiresAt time.Time
}

// Info describes a live lease without exposing its key or id: both are
// replaced by their [HashKey] hashes so an Info can be logged.
type Info struct {
	// KeyHash is HashKey of the user key.
	KeyHash string
	// IDHash is HashKey of the lock id.
	IDHash string
	// Fence is the lease's fencing token.
	Fence Fence
	// AcquiredAt is when the lease was granted, by the backend's clock.
	AcquiredAt time.Time
	// ExpiresAt is when the lease expires, by the backend's clock.
	ExpiresAt time.Time
}

// Capabilities describes what a Backend guarantees.
type Capabilities struct {
	// Backend names the store, such as "redis".
	Backend string
	// Fencing is true when every Lease carries a strictly increasing Fence.
	Fencing bool
	// TimeAuthority is "server" when expiry is judged by the store's clock,
	// "client" when by the caller's.
	TimeAuthority string
}
