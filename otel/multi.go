package otellock

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// KeysKey is the number of keys of a multi-key operation of package
// lock/multilock (acquire_multi and release_multi spans).
const KeysKey = attribute.Key("syncguard.lock.keys")

// multi observes an attempt of lock/multilock on several keys at once
// (lock.OpAcquireMulti) or their release together (lock.OpReleaseMulti):
// one span with the number of keys and the outcome, no key hashes (there
// are many), and the held duration of each lease, as for a plain lease.
func (h *Hook) multi(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	ctx, span := h.startSpan(ctx, op.Kind)
	err := next(ctx, op)
	out := outAcquired
	n := len(op.Keys)
	if op.Kind == lock.OpReleaseMulti {
		out, n = outReleased, len(op.Leases)
	}
	if err != nil {
		out = classify(err)
	}
	if span != nil {
		attrs := []attribute.KeyValue{KeysKey.Int(n), OutcomeKey.String(out.String()), h.inst.backend}
		if op.TTL > 0 {
			attrs = append(attrs, TTLKey.Float64(seconds(op.TTL)))
		}
		span.SetAttributes(attrs...)
		if out == outError {
			setError(span, err)
		}
		span.End()
	}
	for _, l := range op.Leases {
		if op.Kind == lock.OpAcquireMulti {
			h.acquired(ctx, l, 0, out)
		} else {
			h.released(ctx, l.ID, out)
		}
	}
	return err
}
