package rwlock

import (
	"context"
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Mode is how a read-write lock is held: by one of many readers, or by
// its one writer.
type Mode uint8

// The modes of a read-write lock.
const (
	ModeRead  Mode = iota + 1 // one of many readers, while no writer holds or waits
	ModeWrite                 // the one writer, while nobody else holds the key
)

// String returns "read" or "write", the mode's name on the hooks' Op.
func (m Mode) String() string {
	switch m {
	case ModeRead:
		return "read"
	case ModeWrite:
		return "write"
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// Backend is the optional [lock.IDBackend] extension for read-write locks.
// redisbackend.Backend is one. A holder is a lease like any other:
// Release, Extend, ExtendBatch and LookupID take its lock id. A key is a
// read-write lock, a lock or a limit, never two at once: the other kinds'
// calls get [lock.ErrKindMismatch] while it is held. docs/backends.md has
// the whole contract.
type Backend interface {
	lock.IDBackend
	// AcquireRW tries once to hold key in mode with the lock id id, from
	// NewLockID(key): as a reader while no writer holds the key or waits
	// in its queue, as the writer while nobody holds it or waits. Every
	// grant takes a fence from the key's counter. On contention it returns
	// a [*lock.LockedError] whose ExpiresAt is the latest expiry among the
	// holders. With the id of a live holder it returns that grant; with a
	// released id, an error matching [lock.ErrNotHeld].
	AcquireRW(ctx context.Context, key, id string, mode Mode, ttl time.Duration) (lock.Lease, error)
	// JoinRW returns the waiter of id in key's queue, for mode. A release
	// hands the key to the waiters in queue order: readers together until
	// a writer, a writer alone. It does no I/O.
	JoinRW(key, id string, mode Mode, ttl, wait time.Duration) (lock.Waiter, error)
	// LookupRW describes the live holders of key; nil, nil when none.
	LookupRW(ctx context.Context, key string) (*Info, error)
}

// Info describes the live holders of a read-write lock by hashes, as
// [lock.Info] does. Times are the backend's.
type Info struct {
	KeyHash string      // lockdriver.HashKey of the key
	Writer  *lock.Info  // the writer; nil when readers hold the key
	Readers []lock.Info // the readers, earliest expiry first
}
