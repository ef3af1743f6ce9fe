package lock

import (
	"context"
	"time"
)

// The backend contract: a [Backend], and two optional extensions that
// Acquire, Do, Hold, Keep and the middleware detect with a type
// assertion: [IDBackend] (caller-chosen lock ids, and with them retry-safe
// attempts, the fleet-wide waiter queue, concurrency limits and batched
// keep-alive) and [Recorder] (a release that leaves a done marker or a
// record in the same atomic step). redisbackend implements all three. To
// observe a backend's operations, wrap it with [WithHooks]: the result has
// exactly the wrapped backend's extensions.

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

// IDBackend is the optional Backend extension for caller-chosen lock ids.
// Everything that needs an id known before the first attempt uses it:
//
//   - Retry-safe acquisition. The caller picks the lock id (NewLockID) and
//     sends every attempt with it (AcquireID). An attempt that finds key
//     held by a live lease with that id returns that lease, same fence,
//     instead of [ErrLocked]: an attempt that ran but whose reply was lost
//     and that is sent again gets its own grant back instead of orphaning
//     the lock until its TTL ends. Once a lease with that id is released,
//     AcquireID with the id fails with an error matching [ErrNotHeld] and
//     takes nothing, so a late copy of an attempt can never take the key
//     again. [Acquire] uses one id for all its attempts and, when it gives
//     up after an attempt whose outcome is unknown, releases that id in
//     the background.
//   - The fleet-wide waiter queue (Join): a waiter joins a queue of the key
//     kept by the backend, and a release hands the lock straight to the
//     head of that queue (a new lease, with a new fence, for the waiter's
//     id) and tells only that waiter's process. Grants go to waiters in
//     the order they queued, whichever process they run in. Acquire
//     attempts again only as a fallback, at the holder's expiry or after
//     [QueuedPollInterval].
//   - Concurrency limits ([WithLimit]): AcquireSlot and LookupLimit.
//     Release, Extend, LookupID and ExtendBatch work on slots as on locks,
//     by lock id.
//   - Batched keep-alive (ExtendBatch): [Keep] keeps all the leases of such
//     a backend alive from one scheduler goroutine.
type IDBackend interface {
	Backend
	// NewLockID returns a fresh lock id for a lease or slot on key. It may
	// return an InvalidArgument [*Error] for a bad key (AcquireID returns
	// one in any case).
	NewLockID(key string) (string, error)
	// AcquireID is Backend.Acquire with the lock id id, which must come
	// from NewLockID for the same key. Acquiring again with the id of the
	// live lease on key returns that lease; with an id already released it
	// returns an error matching ErrNotHeld.
	AcquireID(ctx context.Context, key, id string, ttl time.Duration) (Lease, error)
	// AcquireSlot tries once to take one of n slots of key with lock id id
	// (from NewLockID(key)) for ttl. When n live leases (or more: a caller
	// with a larger n took them) hold the key it returns a [*LockedError]
	// whose ExpiresAt is the earliest expiry among them, the latest time a
	// slot frees. It is safe to repeat as AcquireID is. A live plain lock
	// on key gives an error matching [ErrKindMismatch].
	AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (Lease, error)
	// LookupLimit describes the live slots of key, or returns nil, nil when
	// none is held. A live plain lock on key gives an error matching
	// [ErrKindMismatch].
	LookupLimit(ctx context.Context, key string) (*LimitInfo, error)
	// Join returns the waiter for key with lock id id (from NewLockID(key))
	// asking for a lease of ttl, for up to wait: for the lock when n is 0,
	// for one of n slots otherwise (a release of a slot hands it to the
	// oldest waiter whose n admits it). It does no I/O. It returns an error
	// matching errors.ErrUnsupported when this instance cannot be told of
	// hand-offs (its client cannot subscribe); the caller then polls.
	Join(key, id string, n int, ttl, wait time.Duration) (Waiter, error)
	// ExtendBatch extends every lease in leases, as Extend(ctx, l.ID,
	// l.TTL) would (the other fields of a Lease are not used); results[i]
	// is for leases[i]. A system error for the whole batch may be returned
	// in every result. It must return exactly len(leases) results; a
	// missing result counts as a transient error.
	ExtendBatch(ctx context.Context, leases []Lease) []ExtendResult
}

// Waiter is one caller's place in the queue of a key (see
// [IDBackend.Join]). Its methods may be called from one goroutine at a
// time, except Granted's channel, which may be received from at any time.
//
// A Waiter may also have the method LeaveWait(ctx context.Context) error:
// Leave(false) that does its work before it returns, under ctx, and
// leaves to the background only what ctx's end cut short (returning
// ctx's error). lock/election's Lead calls it, so that a process that
// exits once its candidate gave up has handed on a term granted to it at
// that moment.
type Waiter interface {
	// Attempt makes one acquisition attempt with the waiter's id, as
	// AcquireID (or AcquireSlot) does; when the key is busy, the attempt
	// also takes the waiter's place at the back of the key's queue, or
	// keeps the place it has.
	Attempt(ctx context.Context) (Lease, error)
	// Granted receives the lease a release handed to the waiter (its ID
	// is the waiter's id), or a zero Lease asking for a new Attempt at
	// once: the backend may have missed hand-offs (its subscription was
	// re-established) and the waiter's place may be lost.
	Granted() <-chan Lease
	// Leave ends the wait; took reports whether the caller got the
	// waiter's lease, from Attempt or Granted. When it did not, Leave
	// gives up the waiter's place and releases whatever lease the id may
	// hold (a release may have handed it the lock at the moment it gave
	// up), in the background. Leave must be called exactly once.
	Leave(took bool)
}

// Recorder is the optional Backend extension for a release that leaves
// something behind in the same atomic step, so no duplicate can acquire
// the key between the release and what it leaves:
//
//   - a done marker, for work that must run at most once per window, such
//     as deduplicated jobs (ReleaseDone, IsDone);
//   - a record of the result (an encoded response), for work whose result
//     is replayed to duplicates, such as idempotent HTTP requests
//     (ReleaseRecord, Record).
//
// Markers and records are kept apart: IsDone does not report a record and
// Record does not return a marker, so replayed requests and deduplicated
// jobs can share a key space. A caller that acquires the key checks them
// while holding the lease: one written by an earlier run is then always
// visible.
type Recorder interface {
	Backend
	// ReleaseDone releases lease l and marks l.Key done for doneTTL. It
	// returns an error matching ErrNotHeld, and writes no marker, when the
	// lease is not held.
	ReleaseDone(ctx context.Context, l Lease, doneTTL time.Duration) error
	// IsDone reports whether key carries a live done marker.
	IsDone(ctx context.Context, key string) (bool, error)
	// ReleaseRecord releases lease l and stores record for l.Key for ttl.
	// It returns an error matching ErrNotHeld, and stores nothing, when
	// the lease is not held.
	ReleaseRecord(ctx context.Context, l Lease, record []byte, ttl time.Duration) error
	// Record returns the record stored for key; ok is false when there is
	// none (never written, or expired).
	Record(ctx context.Context, key string) (record []byte, ok bool, err error)
}

// ExtendResult is the outcome of extending one lease of an
// [IDBackend.ExtendBatch] call, with the results of Backend.Extend.
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

// LimitInfo describes the live slots of a key without exposing its key or
// the lock ids (see [Info]).
type LimitInfo struct {
	// KeyHash is HashKey of the user key.
	KeyHash string
	// Limit is the n of the most recent grant among the live slots (the
	// highest fence).
	Limit int
	// Holders are the live slots, the earliest expiry first. len(Holders)
	// may exceed Limit while a smaller limit takes effect.
	Holders []Info
}
