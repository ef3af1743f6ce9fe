package lock

import (
	"errors"
)

// MaxLimit is the largest n that [WithLimit] accepts.
const MaxLimit = 10000

// ErrKindMismatch reports a key used both as a lock and as a concurrency
// limit: a limit acquisition (or [IDBackend.LookupLimit]) found a live plain
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
// not an [IDBackend] (the error also matches errors.ErrUnsupported).
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

// ValidateLimit returns the error that [Do], [Hold] and [Acquire] would
// return, before any I/O, for [WithLimit](n) on b (an [*Error] with
// [CodeInvalidArgument]: n out of range, or b not an [IDBackend], which also
// matches errors.ErrUnsupported), or nil; for adapters that check their
// configuration when they are built. A nil b is not checked.
func ValidateLimit(b Backend, n int) error {
	if err := ValidateOptions(WithLimit(n)); err != nil {
		return err
	}
	if _, ok := b.(IDBackend); !ok && b != nil {
		e := errNoLimits()
		e.Op = "config"
		return e
	}
	return nil
}

// limiter returns b as an IDBackend when the call asks for a limit, nil
// when it does not, or the error for a backend without limits.
func (c *config) limiter(b Backend) (IDBackend, error) {
	if !c.limitSet {
		return nil, nil
	}
	l, ok := b.(IDBackend)
	if !ok {
		return nil, errNoLimits()
	}
	return l, nil
}

func errNoLimits() *Error {
	return newError(CodeInvalidArgument, "acquire",
		"WithLimit needs a backend that implements lock.IDBackend", errors.ErrUnsupported)
}
