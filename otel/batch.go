package otellock

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// Batched keep-alive: on a lock.IDBackend, lock.Keep extends all its
// leases from one scheduler, one ExtendBatch call per tick, and each call
// is one "syncguard.extend_batch" span.

// Attribute keys of the "syncguard.extend_batch" span: the size of one
// ExtendBatch call and the counts of its outcomes.
const (
	// BatchSizeKey is the number of leases in the batch.
	BatchSizeKey = attribute.Key("syncguard.batch.size")
	// BatchExtendedKey counts the leases the batch extended.
	BatchExtendedKey = attribute.Key("syncguard.batch.extended")
	// BatchNotHeldKey counts the leases the batch found not held (gone,
	// expired or owned by another lock id): lock.Keep reports each as lost.
	BatchNotHeldKey = attribute.Key("syncguard.batch.not_held")
	// BatchErrorsKey counts the leases whose extend failed with a system
	// error; the span's status is then Error, with the first such error.
	BatchErrorsKey = attribute.Key("syncguard.batch.errors")
)

// extendBatch observes a batch of lock.Keep's scheduler
// (lock.OpExtendBatch) in one span (the batch size and the counts of its
// outcomes as attributes; status Error, with the first system error, when
// any lease got one) and records each lease's extend in the
// operation-duration histogram as an extend, all with the batch's
// duration. Lost leases are reported by lock.Keep (lock.OpLeaseLost).
func (h *Hook) extendBatch(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	ctx, span := h.startSpan(ctx, lock.OpExtendBatch)
	timed := h.inst.operation.Enabled(ctx)
	began := time.Now()
	err := next(ctx, op)
	d := seconds(time.Since(began))

	res := op.Results
	if err != nil && len(res) != len(op.Leases) {
		// A hook further down failed the batch: every lease gets its error.
		res = make([]lock.ExtendResult, len(op.Leases))
		for i := range res {
			res[i].Err = err
		}
	}
	var extended, notHeld, failed int64
	var firstErr error
	for i, r := range res {
		out := outExtended
		if r.Err != nil {
			out = classify(r.Err)
		}
		switch out {
		case outExtended:
			extended++
		case outError:
			failed++
			if firstErr == nil {
				firstErr = r.Err
			}
		default:
			notHeld++
		}
		if timed {
			h.recordOp(ctx, lock.OpExtend, 0, out, r.Err, d)
		}
		if i < len(op.Leases) {
			h.trackExtend(op.Leases[i].ID, out, r.ExpiresAt)
		}
	}
	if span != nil {
		span.SetAttributes(BatchSizeKey.Int(len(op.Leases)), BatchExtendedKey.Int64(extended),
			BatchNotHeldKey.Int64(notHeld), BatchErrorsKey.Int64(failed), h.inst.backend)
		if firstErr != nil {
			setError(span, firstErr)
		}
		span.End()
	}
	return err
}
