package otellock

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// The wait of lock.Acquire, lock.Do or lock.Hold (lock.OpWait): one
// "syncguard.wait" span over every attempt and pause, an "attempt" event
// per failed attempt (lock.OpRetry), and the wait-duration histogram.

// waitState is the telemetry of one wait, in the context its attempts
// and events run under (see waitKey). lock runs a wait's operations one
// at a time.
type waitState struct {
	// ctx carries the wait span, for the measurements the end of the wait
	// records (their exemplars then point at the span).
	ctx      context.Context
	span     trace.Span // nil when not recording
	timed    bool       // the wait histogram is enabled
	began    time.Time
	limit    int // the n of the slot waited for; 0 for the lock
	attempts int // the number of the last failed attempt
	handed   bool
}

// waitKey is the context key of the wait state, per hook (a hook of a
// wrapped backend has its own).
type waitKey struct{ h *Hook }

// waitFrom returns the state of the wait that ctx belongs to, or nil.
func (h *Hook) waitFrom(ctx context.Context) *waitState {
	w, _ := ctx.Value(waitKey{h}).(*waitState)
	return w
}

// wait observes a whole acquisition: it starts the "syncguard.wait" span,
// runs the wait under it, so every attempt's "syncguard.acquire" span is
// its child, and ends it with the outcome, the number of attempts, the
// total wait and the fence.
func (h *Hook) wait(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	ctx, span := h.startSpan(ctx, lock.OpWait)
	if span != nil {
		attrs := keyAttrs(make([]attribute.KeyValue, 0, 3), op.Key, h.rawKeys)
		if op.Mode != "" {
			attrs = append(attrs, ModeKey.String(op.Mode))
		}
		span.SetAttributes(attrs...)
	}
	timed := h.inst.wait.Enabled(ctx)
	if span == nil && !timed && !h.observesHandoffs(ctx) {
		return next(ctx, op)
	}
	w := &waitState{ctx: ctx, span: span, timed: timed, began: time.Now(), limit: max(op.Limit, 0)}
	err := next(context.WithValue(ctx, waitKey{h}, w), op)
	h.endWait(w, op.Lease, err)
	return err
}

// retry observes a failed attempt of a wait: an "attempt" event on the
// wait span, with its number, outcome and the pause before the next one.
func (h *Hook) retry(ctx context.Context, op *lock.Op, next lock.OpFunc) error {
	err := next(ctx, op)
	w := h.waitFrom(ctx)
	if w == nil {
		return err
	}
	w.attempts = op.Attempt
	if w.span != nil {
		out := classify(op.Err)
		attrs := []attribute.KeyValue{
			AttemptKey.Int(op.Attempt),
			OutcomeKey.String(out.String()),
			NextWaitKey.Float64(seconds(op.Wait)),
		}
		if out == outError {
			attrs = append(attrs, ErrorTypeKey.String(errorType(op.Err)))
		}
		w.span.AddEvent(attemptEvent, trace.WithAttributes(attrs...))
	}
	return err
}

// endWait ends the wait w, which returned l or err: the wait span's
// outcome, attempts, total wait and fence, and the wait's duration.
func (h *Hook) endWait(w *waitState, l lock.Lease, err error) {
	d := seconds(time.Since(w.began))
	out := outAcquired
	attempts := w.attempts
	switch {
	case err != nil:
		out = classify(err)
		if out == outLocked {
			out = outTimeout // Acquire only gives up on a busy key with a timeout
		}
	case !w.handed:
		attempts++ // the successful attempt is not a retry
	}
	if w.span != nil {
		attrs := []attribute.KeyValue{
			OutcomeKey.String(out.String()),
			AttemptsKey.Int(attempts),
			WaitKey.Float64(d),
			h.inst.backend,
		}
		attrs = slotAttrs(attrs, w.limit)
		if err == nil {
			attrs = append(attrs, FenceKey.String(string(l.Fence)), LockIDHashKey.String(lockdriver.HashKey(l.ID)))
		}
		w.span.SetAttributes(attrs...)
		if out == outError {
			setError(w.span, err)
		}
		w.span.End()
	}
	if w.timed {
		switch {
		case out == outError:
			h.inst.wait.Record(w.ctx, d, h.inst.waitErrorRecord(w.limit, errorType(err)))
		case w.limit > 0:
			h.inst.wait.Record(w.ctx, d, h.inst.limitSets(w.limit).wait[out]...)
		default:
			h.inst.wait.Record(w.ctx, d, h.inst.waitAttrs[out]...)
		}
	}
}
