package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errReleased is the cause of a held context ended by its release.
var errReleased = fmt.Errorf("%w: released", ErrLeaseLost)

// Hold takes the lock on key as [Acquire] does and keeps it alive until
// release is called. held carries the lease for [LeaseFrom]; it ends with a
// cause matching [ErrLeaseLost] when the lease is lost, at release, and
// when ctx ends.
//
// release frees the key under a context of its own, [WithReleaseTimeout],
// so it works after ctx is cancelled. It returns an error matching
// ErrLeaseLost when the lease was lost first. It is idempotent. A failed
// release goes to [WithReleaseErrorHandler] and, when transient, is tried
// again in the background. docs/lock.md tells the details.
func Hold(ctx context.Context, b Backend, key string, opts ...Option) (held context.Context, l Lease, release func() error, err error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, Lease{}, nil, err
	}
	h, err := c.hold(ctx, b, key)
	if err != nil {
		return nil, Lease{}, nil, err
	}
	return h.held, h.lease, func() error { return h.release(func(lost error) error { return lost }) }, nil
}

// holding is one lease taken by Hold or Do.
type holding struct {
	c      *config
	b      Backend
	ctx    context.Context // the caller's: the release detaches from it
	held   context.Context
	lease  Lease
	cancel context.CancelCauseFunc // cancels held
	stop   func() error            // Keep's

	once sync.Once
	lost error // the release's result
}

// hold acquires key and starts keeping the lease alive.
func (c *config) hold(ctx context.Context, b Backend, key string) (*holding, error) {
	if c.lease != nil {
		if ctx == nil || b == nil || c.lease.ID == "" {
			return nil, invalid("hold", "WithLease needs a context, a backend and a granted lease")
		}
		return c.keepLease(ctx, b, *c.lease), nil
	}
	l, err := c.acquire(ctx, b, key)
	if err != nil {
		return nil, err
	}
	return c.keepLease(ctx, b, l), nil
}

// keepLease starts keeping l alive.
func (c *config) keepLease(ctx context.Context, b Backend, l Lease) *holding {
	if l.TTL <= 0 {
		l.TTL = c.ttl // a backend that leaves TTL unset still gets a heartbeat
	}
	kept, stop := keep(ctx, b, l, c.heartbeat)
	// Our own context, so that the release ends held with errReleased.
	held, cancel := context.WithCancelCause(withLease(kept, l))
	return &holding{c: c, b: b, ctx: ctx, held: held, lease: l, cancel: cancel, stop: stop}
}

// release ends the lease once: it cancels held, stops the heartbeat and
// releases, passing outcome(lost) to a release function. It returns the
// loss, also one the release finds.
func (h *holding) release(outcome func(lost error) error) error {
	h.once.Do(func() {
		h.cancel(errReleased)
		lost := h.stop()
		start := time.Now() // the heartbeat extends no more
		release := func(ctx context.Context) error { return h.b.Release(ctx, h.lease.ID) }
		if h.c.release != nil {
			out := outcome(lost)
			release = func(ctx context.Context) error { return h.c.release(ctx, h.lease, out) }
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), h.c.releaseTimeout)
		defer cancel()
		rerr := release(rctx)
		switch {
		case rerr == nil:
		case errors.Is(rerr, ErrNotHeld):
			// A stall past the TTL stops the heartbeat too: a loss.
			if lost == nil {
				lost = fmt.Errorf("%w: found at release: %w", ErrLeaseLost, rerr)
			}
		default:
			h.c.onReleaseError(h.lease, rerr)
			if retryableRelease(rctx, rerr) {
				retryRelease(h.ctx, release, start, h.lease.TTL, h.c.releaseTimeout)
			}
		}
		h.lost = lost
	})
	return h.lost
}
