package lock

import (
	"context"
	"time"
)

// IDAcquirer is an optional Backend interface that makes acquisition safe
// to repeat. The caller picks the lock id before the first attempt
// (NewLockID) and sends every attempt with it (AcquireID). An attempt that
// finds key held by a live lease with that id returns that lease, same
// fence, instead of [ErrLocked]: a command that ran but whose reply was
// lost (a timeout, a reset connection) and that the client or [Acquire]
// sends again gets its own grant back instead of orphaning the lock until
// its TTL ends. Once a lease with that id is released, AcquireID with the
// id fails with an error matching [ErrNotHeld] and takes nothing, so a late
// copy of an attempt can never take the key again; [Acquire] then goes on
// with a new id (an attempt may release its own grant, as redisbackend's
// ReplicaAck does when replicas do not acknowledge it).
//
// [Acquire] and [Do] detect it with a type assertion and use one id for
// all the attempts of one call; when they give up after an attempt whose
// outcome is unknown, they release that id (in the background, bounded by
// the release timeout), so a grant whose reply never came is freed at once.
// Decorators (such as otellock) implement it whether or not the wrapped
// backend does; NewLockID then returns an error matching
// errors.ErrUnsupported and callers fall back to Backend.Acquire.
type IDAcquirer interface {
	// NewLockID returns a fresh lock id for a lease on key. It returns an
	// error matching errors.ErrUnsupported when the backend cannot take
	// caller-chosen ids, and may return an InvalidArgument [*Error] for a
	// bad key (AcquireID returns one in any case).
	NewLockID(key string) (string, error)
	// AcquireID is Backend.Acquire with the lock id id, which must come
	// from NewLockID for the same key. Acquiring again with the id of the
	// live lease on key returns that lease; with an id already released it
	// returns an error matching ErrNotHeld.
	AcquireID(ctx context.Context, key, id string, ttl time.Duration) (Lease, error)
}
