package otellock

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// Hand-offs: with a lock.Queuer (or lock.SlotQueuer) backend, a release
// hands the lease straight to the oldest waiter of lock.Acquire, which
// takes it from Waiter.Granted without an attempt, so no acquire span
// would show it. The wait's observer sees every lease lock.Acquire
// returns, and the attempts tell it whether one of them got it; a lease
// no attempt got was handed over, and the observer gives it its acquire
// span, its hand-off count and its held-duration measurement.

// HandoffKey is true on the "syncguard.acquire" span of a lease a release
// handed over to a waiter through the backend's queue: a span of no
// duration, when the waiter took the lease, under the wait span.
const HandoffKey = attribute.Key("syncguard.handoff")

// waitKey is the context key of the observer of a wait of lock.Acquire,
// per wrapper (a wrapper of a wrapper has its own).
type waitKey struct{ w *backend }

// waitFromContext returns the observer of the wait of lock.Acquire that
// ctx belongs to, or nil.
func (w *backend) waitFromContext(ctx context.Context) *waitObserver {
	o, _ := ctx.Value(waitKey{w}).(*waitObserver)
	return o
}

// observesHandoffs reports whether a hand-off in a wait with ctx whose
// own span does not record would be: a measurement, or an acquire span
// when a Filter skips the wait's span but not the acquire's. (A wait span
// the sampler dropped, or one of the global providers without an SDK,
// says the hand-off's would not record either: that wait costs nothing.)
func (w *backend) observesHandoffs(ctx context.Context) bool {
	return w.tracer != nil && !w.traced(ctx, opWait) && w.traced(ctx, opAcquire) ||
		w.inst.handoff.Enabled(ctx) || w.inst.held.Enabled(ctx)
}

// attempted records what an attempt of the wait came to: took, for a slot
// of limit n (0: the lock).
func (o *waitObserver) attempted(n int, took bool) {
	o.limit, o.took = n, took
}

// handedOver records lease l, which a release handed over to the wait:
// an acquire span of no duration under the wait span (with HandoffKey),
// the hand-off counter, and the start of its held duration.
func (o *waitObserver) handedOver(l lock.Lease) {
	w := o.w
	ctx, c := w.begin(o.ctx, opAcquire)
	c.timed = false // not a call to the backend: no operation duration
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = keyAttrs(make([]attribute.KeyValue, 0, 10), o.key, w.rawKeys)
		attrs = append(attrs, TTLKey.Float64(seconds(l.TTL)), HandoffKey.Bool(true))
		attrs = slotAttrs(attrs, o.limit)
		attrs = append(attrs, FenceKey.String(string(l.Fence)), LockIDHashKey.String(lock.HashKey(l.ID)))
	}
	w.end(ctx, c, outAcquired, nil, attrs)
	if o.limit > 0 {
		w.inst.handoff.Add(o.ctx, 1, w.inst.limitSets(o.limit).add...)
	} else {
		w.inst.handoff.Add(o.ctx, 1, w.inst.backendAdd...)
	}
	w.track(o.ctx, l)
}
