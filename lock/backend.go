package lock

import (
	"context"
	"time"
)

// Backend is a store that grants leases on keys. Implementations must be
// safe for concurrent use. Every method validates its input before any
// I/O and returns an [*Error] with [CodeInvalidArgument] for bad input.
// Two optional extensions add more: [IDBackend] and [Recorder].
// docs/backends.md has the whole contract.
type Backend interface {
	// Acquire tries once to take the lock on key for ttl. On contention
	// it returns a [*LockedError], which matches [ErrLocked].
	Acquire(ctx context.Context, key string, ttl time.Duration) (Lease, error)
	// Release frees the lease id. It returns an error matching
	// [ErrNotHeld] when the lease is gone, expired or someone else's.
	Release(ctx context.Context, id string) error
	// Extend sets the lease's remaining time to ttl, by the backend's
	// clock, and returns the new expiry. Its errors are Release's.
	Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error)
	// IsLocked reports whether key is held by a live lease.
	IsLocked(ctx context.Context, key string) (bool, error)
	// LookupKey describes the live lease on key; nil, nil when none.
	LookupKey(ctx context.Context, key string) (*Info, error)
	// LookupID describes the live lease id; nil, nil when none.
	LookupID(ctx context.Context, id string) (*Info, error)
	// Capabilities describes the backend.
	Capabilities() Capabilities
}

// IDBackend is the optional Backend extension for caller-chosen lock ids.
// It gives retry-safe attempts, the fleet-wide waiter queue, concurrency
// limits and batched keep-alive.
type IDBackend interface {
	Backend
	// NewLockID returns a fresh lock id for a lease or slot on key.
	NewLockID(key string) (string, error)
	// AcquireID is Acquire with the lock id id. With the id of the live
	// lease on key it returns that lease; with a released id, ErrNotHeld.
	AcquireID(ctx context.Context, key, id string, ttl time.Duration) (Lease, error)
	// AcquireSlot tries once to take one of n slots of key with id.
	AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (Lease, error)
	// LookupLimit describes the live slots of key; nil, nil when none.
	LookupLimit(ctx context.Context, key string) (*LimitInfo, error)
	// Join returns the waiter of id in key's queue, for the lock when n
	// is 0, else for one of n slots. It does no I/O.
	Join(key, id string, n int, ttl, wait time.Duration) (Waiter, error)
	// ExtendBatch extends each lease by its TTL, one result per lease.
	ExtendBatch(ctx context.Context, leases []Lease) []ExtendResult
}

// Waiter is one caller's place in the queue of a key, from [IDBackend.Join].
type Waiter interface {
	// Attempt makes one attempt with the waiter's id, keeping its place.
	Attempt(ctx context.Context) (Lease, error)
	// Granted receives a lease handed to the waiter, or a zero Lease
	// asking for an attempt at once.
	Granted() <-chan Lease
	// Leave ends the wait; took tells whether the caller got the lease.
	// Without it, the place and what the id holds are given up.
	Leave(took bool)
}

// Recorder is the optional Backend extension for a release that leaves a
// done marker or a record in the same atomic step, and for an acquire
// that answers with that mark instead of taking the lock. An acquire of
// a Recorder that cannot look in the same step may fail with an error
// matching errors.ErrUnsupported, taking nothing: callers then call
// Acquire and IsDone or Record.
type Recorder interface {
	Backend
	// ReleaseDone releases l and marks l.Key done for doneTTL.
	ReleaseDone(ctx context.Context, l Lease, doneTTL time.Duration) error
	// IsDone reports whether key carries a live done marker.
	IsDone(ctx context.Context, key string) (bool, error)
	// AcquireDone is Acquire, unless key carries a live done marker: then
	// it takes nothing and returns done, with a zero Lease.
	AcquireDone(ctx context.Context, key string, ttl time.Duration) (l Lease, done bool, err error)
	// ReleaseRecord releases l and stores record for l.Key for ttl.
	ReleaseRecord(ctx context.Context, l Lease, record []byte, ttl time.Duration) error
	// Record returns the record stored for key; ok is false when none.
	Record(ctx context.Context, key string) (record []byte, ok bool, err error)
	// AcquireRecord is Acquire, unless a record is stored for key: then it
	// takes nothing and returns the record (never nil), with a zero Lease.
	AcquireRecord(ctx context.Context, key string, ttl time.Duration) (l Lease, record []byte, err error)
}

// ExtendResult is the outcome for one lease of ExtendBatch.
type ExtendResult struct {
	ExpiresAt time.Time // the new expiry; zero when Err is set
	Err       error     // Extend's error for the lease, or nil
}

// Lease is a granted lock. Its ID releases or extends it: keep it out of
// logs, like a credential.
type Lease struct {
	Key       string        // the user key, NFC
	ID        string        // the lock id: 22 base64url characters
	Fence     Fence         // this grant's fencing token
	TTL       time.Duration // the duration asked for; Keep extends by it
	ExpiresAt time.Time     // the expiry, by the backend's clock
}

// Info describes a live lease by the hashes of its key and id, so that it
// can be logged. Times are the backend's.
type Info struct {
	KeyHash    string // lockdriver.HashKey of the key
	IDHash     string // lockdriver.HashKey of the lock id
	Fence      Fence
	AcquiredAt time.Time
	ExpiresAt  time.Time
}

// Capabilities describes what a Backend guarantees.
type Capabilities struct {
	Backend       string // the store, such as "redis"
	Fencing       bool   // every Lease has a strictly increasing Fence
	TimeAuthority string // whose clock judges expiry: "server" or "client"
	// FencePerKey: every key keeps a fence counter of its own that is
	// never deleted, so a key space without bound grows the store
	// without bound.
	FencePerKey bool
}

// LimitInfo describes the live slots of a key, by hashes as [Info] does.
type LimitInfo struct {
	KeyHash string // lockdriver.HashKey of the key
	Limit   int    // the n of the latest grant
	Holders []Info // the live slots, earliest expiry first; may exceed Limit
}
