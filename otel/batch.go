package otellock

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// Batched keep-alive through the decorator: when the wrapped backend is a
// lock.BatchExtender, so is the result of Wrap, and lock.Keep keeps all its
// leases alive from one scheduler instead of a goroutine per lease.

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

// batcher decorates a backend that also implements lock.BatchExtender.
type batcher struct {
	*backend
	next lock.BatchExtender
}

// completerBatcher decorates a backend that implements both lock.Completer
// and lock.BatchExtender.
type completerBatcher struct {
	*completer
	next lock.BatchExtender
}

// recorderBatcher decorates a backend that implements lock.Completer,
// lock.Recorder and lock.BatchExtender (the Redis backend does).
type recorderBatcher struct {
	*recorder
	next lock.BatchExtender
}

var (
	_ lock.BatchExtender = (*batcher)(nil)
	_ lock.BatchExtender = (*completerBatcher)(nil)
	_ lock.Completer     = (*completerBatcher)(nil)
	_ lock.BatchExtender = (*recorderBatcher)(nil)
	_ lock.Recorder      = (*recorderBatcher)(nil)
)

// ExtendBatch calls the wrapped backend's ExtendBatch in one
// "syncguard.extend_batch" span; see backend.extendBatch.
func (w *batcher) ExtendBatch(ctx context.Context, reqs []lock.ExtendRequest) []lock.ExtendResult {
	return w.extendBatch(ctx, w.next, reqs)
}

// ExtendBatch calls the wrapped backend's ExtendBatch in one
// "syncguard.extend_batch" span; see backend.extendBatch.
func (w *completerBatcher) ExtendBatch(ctx context.Context, reqs []lock.ExtendRequest) []lock.ExtendResult {
	return w.extendBatch(ctx, w.next, reqs)
}

// ExtendBatch calls the wrapped backend's ExtendBatch in one
// "syncguard.extend_batch" span; see backend.extendBatch.
func (w *recorderBatcher) ExtendBatch(ctx context.Context, reqs []lock.ExtendRequest) []lock.ExtendResult {
	return w.extendBatch(ctx, w.next, reqs)
}

// extendBatch runs be.ExtendBatch in one span (the batch size and the
// counts of its outcomes as attributes; status Error, with the first
// system error, when any lease got one) and records each lease's extend in
// the operation-duration histogram as Extend does, all with the batch's
// duration. Lost leases are reported by lock.Keep through ObserveLeaseLost.
func (w *backend) extendBatch(ctx context.Context, be lock.BatchExtender, reqs []lock.ExtendRequest) []lock.ExtendResult {
	if ctx == nil {
		return be.ExtendBatch(ctx, reqs)
	}
	ctx, span := w.startSpan(ctx, opExtendBatch)
	timed := w.inst.operation.Enabled(ctx)
	began := time.Now()
	res := be.ExtendBatch(ctx, reqs)
	d := seconds(time.Since(began))

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
			w.recordOp(ctx, opExtend, 0, out, r.Err, d)
		}
		if i < len(reqs) {
			w.trackExtend(reqs[i].ID, out, r.ExpiresAt)
		}
	}
	if span != nil {
		span.SetAttributes(BatchSizeKey.Int(len(reqs)), BatchExtendedKey.Int64(extended),
			BatchNotHeldKey.Int64(notHeld), BatchErrorsKey.Int64(failed), w.inst.backend)
		if firstErr != nil {
			setError(span, firstErr)
		}
		span.End()
	}
	return res
}
