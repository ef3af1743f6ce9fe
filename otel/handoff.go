package otellock

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// Hand-offs: a release can hand a lease straight to a queued waiter, with
// no attempt to show it. lock tells the hooks with lock.OpGranted, and the
// hook gives the lease an acquire span, a count and a held duration.

// HandoffKey is true on the "syncguard.acquire" span of a lease a release
// handed to a waiter, and on the "syncguard.release" span of that release.
const HandoffKey = attribute.Key("syncguard.handoff")

// HandoffFenceKey is the fence of the lease a release handed to a waiter,
// on the "syncguard.release" span.
const HandoffFenceKey = attribute.Key("syncguard.handoff.fence")

// observesHandoffs reports whether anything would record a hand-off in a
// wait whose own span does not: a measurement, or an acquire span when a
// Filter skips only the wait's span.
func (h *Hook) observesHandoffs(ctx context.Context) bool {
	return h.tracer != nil && !h.traced(ctx, lock.OpWait) && h.traced(ctx, lock.OpAcquire) ||
		h.inst.handoff.Enabled(ctx) || h.inst.held.Enabled(ctx)
}

// granted observes lease op.Lease, which a release handed to the wait of
// ctx: an acquire span of no duration, a count, and the held duration's
// start.
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
