package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errReleased is the cause of a held context cancelled by its release: the
// lease is no longer held, so work still running under it must stop as if
// the lease were lost.
var errReleased = fmt.Errorf("%w: released", ErrLeaseLost)

// Hold takes the lock on key from b and keeps it until release is called:
// it acquires with retry (see [Acquire]; the same options as [Do]), keeps
// the lease alive with [Keep], and returns a context for the protected
// work. held carries the lease ([LeaseFrom]) and is cancelled with a cause
// matching [ErrLeaseLost] when the lease is lost, when release is called,
// and when ctx ends.
//
// Call release once the work is done, typically deferred. It cancels held,
// stops the heartbeat and releases the lease under a context of its own
// (not ctx, bounded by [WithReleaseTimeout]), so a cancelled caller still
// frees the key at once. It returns an error matching ErrLeaseLost when
// the lease was lost before the release (the heartbeat lost it, or the
// release found it already gone, as after a process stall past the TTL):
// the work may not have been exclusive. A failed release goes to
// [WithReleaseErrorHandler], once. One that failed on a transient error
// (codes ServiceUnavailable, NetworkTimeout and RateLimited, or no answer
// within the release timeout: the store is restarting, stalled or busy)
// is then tried again in the background, at once and then with waits
// from 50ms doubling to 1s, until the store answers or the lease's TTL has
// passed since the release, so the key is free within about a second of
// the store answering again; release does not wait for those tries. Any
// other failure leaves the lease to end by its TTL. release is idempotent
// and safe to call from any goroutine; every call returns the first
// call's result.
//
// A release that is never called does not keep the lock forever unless
// ctx lives forever: when ctx ends, the heartbeat stops, held is
// cancelled, and the lease ends by its TTL.
//
// On error nothing is held, release is nil, and the errors are those of
// [Acquire].
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

// HoldLease is Hold for a lease l the caller already holds, such as one
// won by lock/election's campaign: it keeps l alive and returns held and
// release as Hold does. The options of the acquisition do not apply. The
// heartbeat extends l from a goroutine of its own under ctx, so its calls
// carry ctx's values, such as a span.
func HoldLease(ctx context.Context, b Backend, l Lease, opts ...Option) (held context.Context, release func() error, err error) {
	c, err := newConfig(opts)
	if err != nil {
		return nil, nil, err
	}
	h := c.keepLease(ctx, b, l, false)
	return h.held, func() error { return h.release(func(lost error) error { return lost }) }, nil
}

// hold acquires key and starts keeping the lease alive.
func (c *config) hold(ctx context.Context, b Backend, key string) (*holding, error) {
	l, err := c.acquire(ctx, b, key)
	if err != nil {
		return nil, err
	}
	return c.keepLease(ctx, b, l, true), nil
}

// keepLease starts keeping l alive, batched with the other leases of b
// when batch is set and b allows it.
func (c *config) keepLease(ctx context.Context, b Backend, l Lease, batch bool) *holding {
	if l.TTL <= 0 {
		l.TTL = c.ttl // a backend that leaves TTL unset still gets a heartbeat
	}
	kept, stop := keep(ctx, b, l, c.heartbeat, batch)
	// A context of our own under Keep's, so that the release cancels held
	// with errReleased rather than a bare context.Canceled; a loss reaches
	// it from Keep's context with Keep's cause.
	held, cancel := context.WithCancelCause(withLease(kept, l))
	return &holding{c: c, b: b, ctx: ctx, held: held, lease: l, cancel: cancel, stop: stop}
}

// release ends the lease once: it cancels held, stops the heartbeat, and
// releases with the configured release function, to which it passes
// outcome(lost) (lost is the heartbeat's loss error or nil). It returns
// the loss, including one that the release itself finds; release failures
// go to the release error handler, and one on a transient error is tried
// again in the background (retryRelease) without delaying the return.
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
			// The lease ended before the release, unnoticed by the
			// heartbeat when the whole process stalled past the TTL (a
			// GC or VM pause stops the heartbeat too). That is a loss.
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
