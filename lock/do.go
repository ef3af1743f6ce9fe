package lock

import (
	"context"
	"fmt"
)

// Do runs fn while holding the lock on key: [Hold], then fn under the
// held context, then the release, also when fn panics. fn's context ends
// with a cause matching [ErrLeaseLost] when the lease is lost.
//
// Do returns fn's error, joined with one matching ErrLeaseLost when the
// lease was lost meanwhile; ErrLeaseLost alone when fn returned nil. A
// lease found gone at release counts as lost. Acquisition errors are
// [Acquire]'s. docs/lock.md tells the details.
func Do(ctx context.Context, b Backend, key string, fn func(ctx context.Context, l Lease) error, opts ...Option) (err error) {
	c, err := newConfig(opts)
	if err != nil {
		return err
	}
	if fn == nil {
		return invalid("do", "nil function")
	}
	h, err := c.hold(ctx, b, key)
	if err != nil {
		return err
	}
	returned := false
	defer func() {
		// Runs on return and on panic alike.
		lost := h.release(func(lost error) error {
			if !returned {
				return ErrFuncPanicked
			}
			return joinLost(err, lost)
		})
		err = joinLost(err, lost)
	}()
	err = fn(h.held, h.lease)
	returned = true
	return err
}

// joinLost is Do's result for fn's error err and the lease loss lost.
func joinLost(err, lost error) error {
	switch {
	case lost == nil:
		return err
	case err == nil:
		return lost
	}
	return fmt.Errorf("%w; %w", err, lost)
}
