package otellock

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// Hand-offs: on a lock.IDBackend that queues waiters, a release hands the
// lease straight to the oldest waiter of lock.Acquire, which takes it from
// Waiter.Granted without an attempt, so no acquire span would show it.
// lock tells the hooks (lock.OpGranted), and the hook gives the lease its
// acquire span, its hand-off count and its held-duration measurement.

// HandoffKey is true on the "syncguard.acquire" span of a lease a release
// handed over to a waiter through the backend's queue: a span of no
// duration, when the waiter took the lease, under the wait span.
// It is also true on the "syncguard.release" span of a release that
// handed the lock (or a slot) to a waiter, with HandoffFenceKey.
const HandoffKey = attribute.Key("syncguard.handoff")

// HandoffFenceKey is the fence of the lease a release handed to a waiter,
// on the "syncguard.release" span (see lock.Op.HandedTo).
const HandoffFenceKey = attribute.Key("syncguard.handoff.fence")

// observesHandoffs reports whether a hand-off in a wait with ctx whose
// own span does not record would be: a measurement, or an acquire span
// when a Filter skips the wait's span but not the acquire's. (A wait span
// the sampler dropped, or one of the global providers without an SDK,
// says the hand-off's would not record either: that wait costs nothing.)
func (h *Hook) observesHandoffs(ctx context.Context) bool {
	return h.tracer != nil && !h.traced(ctx, lock.OpWait) && h.traced(ctx, lock.OpAcquire) ||
		h.inst.handoff.Enabled(ctx) || h.inst.held.Enabled(ctx)
}

// granted observes lease op.Lease, which a release handed over to the
// wait ctx belongs to: an acquire span of no duration under the wait span
// (with HandoffKey), the hand-off counter, and the start of its held
// duration.
func (h *Hook) granted(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	err := next(ctx, op)
	w := h.waitFrom(ctx)
	if w == nil {
		return err // nothing would record the hand-off (see observesHandoffs)
	}
	w.handed = true
	sctx, c := h.begin(ctx, lock.OpAcquire)
	c.timed = false // not a call to the backend: no operation duration
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = h.opAttrs(make([]attribute.KeyValue, 0, 12), op, w.limit, nil)
		attrs = append(attrs, HandoffKey.Bool(true))
	}
	h.end(sctx, c, outAcquired, nil, attrs)
	if w.limit > 0 {
		h.inst.handoff.Add(ctx, 1, h.inst.limitSets(w.limit).add...)
	} else {
		h.inst.handoff.Add(ctx, 1, h.inst.backendAdd...)
	}
	h.track(ctx, op.Lease)
	return err
}
