package lock

import (
	"errors"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// WithLimit makes Do, Hold and Acquire take one of n slots of key instead
// of the lock: a concurrency limit, each slot an ordinary fenced [Lease].
// n is between 1 and 10000, and b must be an [IDBackend], else the call
// fails with CodeInvalidArgument before any I/O. A key is a lock or a
// limit, never both at once ([ErrKindMismatch]); see docs/limits.md.
func WithLimit(n int) Option {
	// n outside [0, MaxLimit+1] is stored as the nearest of them: as
	// invalid, in the config's 32 bits.
	return optionFunc(func(c *config) { c.limit, c.limitSet = int32(min(max(n, 0), contract.MaxLimit+1)), true })
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
