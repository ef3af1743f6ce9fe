package lock

import (
	"context"
	"fmt"
)

// Do runs fn while holding the lock on key: [Hold], then fn under the
// held context, then its release. It acquires with retry (see [Acquire]),
// keeps the lease alive with [Keep] while fn runs, and releases when fn
// returns or panics. fn's context carries the lease ([LeaseFrom]) and is
// cancelled with a cause matching [ErrLeaseLost] when the lease is lost;
// fn should then stop and, for writes already in flight, rely on the
// lease's fence.
//
// The release uses a context of its own (not ctx, bounded by
// [WithReleaseTimeout]), so a cancelled caller still frees the key at once.
// A failed release goes to [WithReleaseErrorHandler], never to the return
// value, and one that failed on a transient error is tried again in the
// background as [Hold]'s release is.
//
// Do returns fn's error, joined with an error matching [ErrLeaseLost] when
// the lease was also lost while fn ran (so errors.Is matches both);
// ErrLeaseLost alone when fn returned nil after the lease was lost (fn's
// work may not have been exclusive); otherwise nil. A lease counts as lost
// when the heartbeat lost it, and also when the release finds it already
// gone: a process that stalls past the TTL (GC, VM pause) stalls its
// heartbeat too, and only the release can tell. Acquisition errors are
// those of [Acquire].
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
