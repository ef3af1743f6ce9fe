package otellock

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// leaseLost observes lock.OpLeaseLost, a lease lock.Keep lost: a
// "syncguard.lease_lost" event on the span in ctx (Keep's: the request or
// job that held the lease), and the lost-lease counter.
func (h *Hook) leaseLost(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	err := next(ctx, op)
	l := op.Lease
	if h.held.len() > 0 {
		h.held.remove(l.ID)
	}
	h.inst.leaseLost.Add(ctx, 1, h.inst.backendAdd...)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := keyAttrs(make([]attribute.KeyValue, 0, 6), l.Key, h.rawKeys)
		attrs = append(attrs,
			LockIDHashKey.String(lockdriver.HashKey(l.ID)),
			FenceKey.String(string(l.Fence)),
			h.inst.backend,
		)
		if op.Err != nil {
			attrs = append(attrs, ReasonKey.String(op.Err.Error()))
		}
		span.AddEvent(leaseLostEvent, trace.WithAttributes(attrs...))
	}
	return err
}
