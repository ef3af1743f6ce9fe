package otellock

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock"
)

// The telemetry of one call: its span (filtered, sampled, with the static
// attributes of WithSpanAttributes), its outcome and its duration.

// call is the telemetry state of one Backend call.
type call struct {
	op    lock.OpKind
	limit int        // the n of a slot's acquire; 0 otherwise
	span  trace.Span // nil when not recording
	timed bool       // the duration histogram is enabled
	began time.Time  // set when timed
}

// startSpan starts the span of operation o and returns it with its
// context, or nil and ctx unchanged when no span would record: the
// TracerProvider is the no-op one, a Filter skips the call, or the sampler
// drops it.
func (h *Hook) startSpan(ctx context.Context, o lock.OpKind) (context.Context, trace.Span) {
	if h.tracer == nil || !h.traced(ctx, o) {
		return ctx, nil
	}
	sctx, span := h.tracer.Start(ctx, spanNames[o], h.startOpts...)
	if !span.IsRecording() {
		span.End()
		return ctx, nil
	}
	return sctx, span
}

// traced reports whether every Filter lets a call of o made with ctx have
// a span.
func (h *Hook) traced(ctx context.Context, o lock.OpKind) bool {
	for _, f := range h.filters {
		if !f(ctx, o) {
			return false
		}
	}
	return true
}

// begin starts the telemetry of a call of operation o. The span, if one
// records, is in the returned context.
func (h *Hook) begin(ctx context.Context, o lock.OpKind) (context.Context, call) {
	c := call{op: o}
	ctx, c.span = h.startSpan(ctx, o)
	if h.inst.operation.Enabled(ctx) {
		c.timed = true
		c.began = time.Now()
	}
	return ctx, c
}

// end finishes the telemetry of call c: out is the outcome of a call that
// succeeded (err == nil); attrs go on the span, with room for two more.
// It returns the outcome.
func (h *Hook) end(ctx context.Context, c call, out outcome, err error, attrs []attribute.KeyValue) outcome {
	if err != nil {
		out = classify(err)
	}
	if c.span != nil {
		c.span.SetAttributes(append(attrs, OutcomeKey.String(out.String()), h.inst.backend)...)
		if out == outError {
			setError(c.span, err)
		}
		c.span.End()
	}
	if c.timed {
		h.recordOp(ctx, c.op, c.limit, out, err, seconds(time.Since(c.began)))
	}
	return out
}

// setError marks span as failed with err.
func setError(span trace.Span, err error) {
	span.SetAttributes(ErrorTypeKey.String(errorType(err)))
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}
