package lock

import (
	"errors"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// WithLimit makes Do, Hold and Acquire take one of n slots of key, each
// a fenced [Lease]: a concurrency limit. n is 1 to 10000, on an
// [IDBackend]. A key is a lock or a limit: see [ErrKindMismatch].
func WithLimit(n int) Option {
	// Out of range is stored as invalid, in 32 bits.
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
