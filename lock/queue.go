package lock

import (
	"context"
	"time"
)

// Queuer is an optional Backend interface for a fair wait across a whole
// fleet: a waiter joins a queue of the key kept by the backend itself, and
// the release of a lease hands the lock straight to the head of that
// queue (a new lease, with a new fence, for the waiter's lock id) and
// tells only that waiter's process. One release then costs one hand-off,
// however many processes wait, and grants go to waiters in the order they
// queued, whichever process they run in.
//
// [Acquire], [Do] and [Hold] use it, when the backend is also an
// [IDAcquirer] and the wait ([WithWait]) is not zero: they Join with the call's lock id, make every attempt with
// Attempt, take a lease from Granted, and Leave when done. They attempt
// again only as a fallback, at the holder's expiry or after
// [QueuedPollInterval]: a holder that dies lets its lease expire and hands
// nothing on, nor do clients that do not queue (they still take a free
// lock, and never disturb the queue).
type Queuer interface {
	IDAcquirer
	// Join returns the waiter for key with lock id id (from NewLockID(key))
	// asking for leases of ttl, for up to wait. It does no I/O. It returns
	// an error matching errors.ErrUnsupported when the backend cannot queue
	// waiters (no notifications); the caller then waits as it would
	// without a Queuer.
	Join(key, id string, ttl, wait time.Duration) (Waiter, error)
}

// Waiter is one caller's place in the queue of a key (see [Queuer]). Its
// methods may be called from one goroutine at a time, except Granted's
// channel, which may be received from at any time.
type Waiter interface {
	// Attempt makes one acquisition attempt with the waiter's id, as
	// IDAcquirer.AcquireID does; when the key is busy, the attempt also
	// takes the waiter's place at the back of the key's queue, or keeps
	// the place it has. Its errors are AcquireID's.
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
