package otellock

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock"
)

// ObserveAcquire implements lock.Observer: it starts the
// "syncguard.wait" span that covers the whole acquisition by lock.Acquire
// or lock.Do, and returns its context, so every attempt's
// "syncguard.acquire" span is its child.
func (w *backend) ObserveAcquire(ctx context.Context, key string) (context.Context, lock.AcquireObserver) {
	ctx, span := w.startSpan(ctx, opWait)
	if span != nil {
		span.SetAttributes(keyAttrs(make([]attribute.KeyValue, 0, 3), key, w.rawKeys)...)
	}
	timed := w.inst.wait.Enabled(ctx)
	if span == nil && !timed && w.nextObs == nil && !w.observesHandoffs(ctx) {
		return ctx, nopObserver{}
	}
	o := &waitObserver{w: w, ctx: ctx, key: key, span: span, timed: timed, began: time.Now()}
	ctx = context.WithValue(ctx, waitKey{w}, o)
	if w.nextObs != nil {
		ctx, o.next = w.nextObs.ObserveAcquire(ctx, key)
	}
	return ctx, o
}

// nopObserver observes an acquisition when nothing would record it.
type nopObserver struct{}

// Attempt does nothing.
func (nopObserver) Attempt(int, error, time.Duration) {}

// Done does nothing.
func (nopObserver) Done(lock.Lease, error) {}

// waitObserver is the lock.AcquireObserver of one acquisition. lock calls
// it from one goroutine.
type waitObserver struct {
	w *backend
	// ctx carries the wait span, for the measurements Done records (their
	// exemplars then point at the span).
	ctx      context.Context
	key      string
	span     trace.Span // nil when not recording
	timed    bool       // the wait histogram is enabled
	began    time.Time
	attempts int
	next     lock.AcquireObserver
	// limit is the n of the slot the attempts asked for (0: the lock);
	// took is set when the last attempt got the lease. Both are set by
	// the attempts (see backend.acquire), on the wait's goroutine.
	limit int
	took  bool
}

// Attempt implements lock.AcquireObserver: an "attempt" event on the wait
// span.
func (o *waitObserver) Attempt(attempt int, err error, wait time.Duration) {
	o.attempts = attempt
	if o.span != nil {
		out := classify(err)
		attrs := []attribute.KeyValue{
			AttemptKey.Int(attempt),
			OutcomeKey.String(out.String()),
			NextWaitKey.Float64(seconds(wait)),
		}
		if out == outError {
			attrs = append(attrs, ErrorTypeKey.String(errorType(err)))
		}
		o.span.AddEvent(attemptEvent, trace.WithAttributes(attrs...))
	}
	if o.next != nil {
		o.next.Attempt(attempt, err, wait)
	}
}

// Done implements lock.AcquireObserver: it ends the wait span with the
// outcome, the number of attempts, the total wait and the fence, and
// records the wait's duration.
func (o *waitObserver) Done(l lock.Lease, err error) {
	d := seconds(time.Since(o.began))
	out := outAcquired
	attempts := o.attempts
	switch {
	case err != nil:
		out = classify(err)
		if out == outLocked {
			out = outTimeout // Acquire only gives up on a busy key with a timeout
		}
	case o.took:
		attempts++ // the successful attempt is not reported to Attempt
	default:
		o.handedOver(l) // no attempt took it: a release handed it over
	}
	if o.span != nil {
		attrs := []attribute.KeyValue{
			OutcomeKey.String(out.String()),
			AttemptsKey.Int(attempts),
			WaitKey.Float64(d),
			o.w.inst.backend,
		}
		attrs = slotAttrs(attrs, o.limit)
		if err == nil {
			attrs = append(attrs, FenceKey.String(string(l.Fence)), LockIDHashKey.String(lock.HashKey(l.ID)))
		}
		o.span.SetAttributes(attrs...)
		if out == outError {
			setError(o.span, err)
		}
		o.span.End()
	}
	if o.timed {
		switch {
		case out == outError:
			o.w.inst.wait.Record(o.ctx, d, o.w.inst.waitErrorRecord(o.limit, errorType(err)))
		case o.limit > 0:
			o.w.inst.wait.Record(o.ctx, d, o.w.inst.limitSets(o.limit).wait[out]...)
		default:
			o.w.inst.wait.Record(o.ctx, d, o.w.inst.waitAttrs[out]...)
		}
	}
	if o.next != nil {
		o.next.Done(l, err)
	}
}

// ObserveLeaseLost implements lock.Observer: it adds a
// "syncguard.lease_lost" event to the span in ctx (the caller's: the
// request or job that held the lease) and counts the loss.
func (w *backend) ObserveLeaseLost(ctx context.Context, l lock.Lease, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if w.held.len() > 0 {
		w.held.remove(l.ID)
	}
	w.inst.leaseLost.Add(ctx, 1, w.inst.backendAdd...)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := keyAttrs(make([]attribute.KeyValue, 0, 6), l.Key, w.rawKeys)
		attrs = append(attrs,
			LockIDHashKey.String(lock.HashKey(l.ID)),
			FenceKey.String(string(l.Fence)),
			w.inst.backend,
		)
		if err != nil {
			attrs = append(attrs, ReasonKey.String(err.Error()))
		}
		span.AddEvent(leaseLostEvent, trace.WithAttributes(attrs...))
	}
	if w.nextObs != nil {
		w.nextObs.ObserveLeaseLost(ctx, l, err)
	}
}
