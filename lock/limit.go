package lock

import (
	"context"
	"errors"
	"time"
)

// MaxLimit is the largest n that [WithLimit] accepts.
const MaxLimit = 10000

// ErrKindMismatch reports a key used both as a lock and as a concurrency
// limit: a limit acquisition (or [Limiter.LookupLimit]) found a live plain
// lock on the key, or a plain acquisition (IsLocked, LookupKey) found live
// slot holders. Neither is touched; the key serves the other kind again
// once its leases end. Backends return it inside an [*Error] with
// [CodeInvalidArgument]: mixing the two on one key is a mistake in the
// program, not contention. Test for it with errors.Is.
var ErrKindMismatch = errors.New("syncguard: the key is held as a lock and asked for as a concurrency limit, or the reverse")

// WithLimit makes [Do], [Hold] and [Acquire] take one of n slots of key
// instead of the lock: a concurrency limit, granted while fewer than n
// live leases hold the key. n must be between 1 and [MaxLimit]; anything
// else is an InvalidArgument error before any I/O, as is a backend that is
// not a [Limiter] (the error also matches errors.ErrUnsupported).
//
// A slot is an ordinary [Lease]: its own lock id and a fence from the key's
// counter (so a key's grants strictly increase in grant order), kept alive
// by Keep, released, extended and looked up by id like a lock, and its
// loss is reported the same way. WithLimit(1) is a lock: one holder at a
// time, fenced, and every other guarantee of a lock, but a key is used
// either as a lock or as a limit, never both at once (see
// [ErrKindMismatch]).
//
// Each call's n is its own: a slot is granted while fewer than the
// caller's n leases hold the key. A smaller n therefore takes effect as
// slots free up (no holder is evicted), and a caller asking with a larger
// n is granted at once, whether it arrives or already waits in the
// backend's queue.
func WithLimit(n int) Option {
	return optionFunc(func(c *config) { c.limit, c.limitSet = n, true })
}

// Limiter is an optional Backend interface for concurrency limits (see
// [WithLimit]). Release, Extend, LookupID and a [BatchExtender] work on its
// slots as on locks, by lock id. A decorator (such as otellock) may
// implement it whatever the backend it wraps; AcquireSlot and LookupLimit
// then return an error matching errors.ErrUnsupported, without I/O, when
// that backend has no limits, and [Acquire] reports it like a backend that
// is not a Limiter.
type Limiter interface {
	Backend
	// NewLockID returns a fresh lock id for a slot of key, as
	// IDAcquirer.NewLockID does for a lock.
	NewLockID(key string) (string, error)
	// AcquireSlot tries once to take one of n slots of key with lock id id
	// (from NewLockID(key)) for ttl. When n live leases (or more: a caller
	// with a larger n took them) hold the key it returns a [*LockedError]
	// whose ExpiresAt is the earliest expiry among them, the latest time a
	// slot frees. Like IDAcquirer.AcquireID it is safe to repeat: with the
	// id of a live slot it returns that slot, and with an id already
	// released it returns an error matching ErrNotHeld. A live plain lock
	// on key gives an error matching [ErrKindMismatch].
	AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (Lease, error)
	// LookupLimit describes the live slots of key, or returns nil, nil when
	// none is held. A live plain lock on key gives an error matching
	// [ErrKindMismatch].
	LookupLimit(ctx context.Context, key string) (*LimitInfo, error)
}

// SlotQueuer is an optional [Limiter] interface: the waiter queue of
// [Queuer] for slots. A release of a slot hands it to the oldest waiter
// whose n admits it. [Acquire] uses it as it uses a Queuer for locks.
type SlotQueuer interface {
	// JoinSlot is Queuer.Join for a slot of key among n.
	JoinSlot(key, id string, n int, ttl, wait time.Duration) (Waiter, error)
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

// ValidateLimit returns the error that [Do], [Hold] and [Acquire] would
// return, before any I/O, for [WithLimit](n) on b (an [*Error] with
// [CodeInvalidArgument]: n out of range, or b not a [Limiter], which also
// matches errors.ErrUnsupported), or nil; for adapters that check their
// configuration when they are built. A nil b is not checked.
func ValidateLimit(b Backend, n int) error {
	if err := ValidateOptions(WithLimit(n)); err != nil {
		return err
	}
	if _, ok := b.(Limiter); !ok && b != nil {
		e := errNoLimits()
		e.Op = "config"
		return e
	}
	return nil
}

// limiter returns b as a Limiter when the call asks for a limit, nil when
// it does not, or the error for a backend without limits.
func (c *config) limiter(b Backend) (Limiter, error) {
	if !c.limitSet {
		return nil, nil
	}
	l, ok := b.(Limiter)
	if !ok {
		return nil, errNoLimits()
	}
	return l, nil
}

func errNoLimits() *Error {
	return newError(CodeInvalidArgument, "acquire",
		"WithLimit needs a backend that implements lock.Limiter", errors.ErrUnsupported)
}
