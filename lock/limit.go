package lock

import "errors"

// WithLimit makes Do, Hold and Acquire take one of n slots of key instead
// of the lock: a concurrency limit, each slot an ordinary fenced [Lease].
// n is between 1 and 10000, and b must be an [IDBackend], else the call
// fails with CodeInvalidArgument before any I/O. A key is a lock or a
// limit, never both at once ([ErrKindMismatch]); see docs/limits.md.
func WithLimit(n int) Option {
	return optionFunc(func(c *config) { c.limit, c.limitSet = n, true })
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
