package otellock

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/syncguard-go/syncguard/lock"
)

// Hook is a lock.Hook that records every operation of a backend, the
// waits and lost leases of lock.Acquire, lock.Do, lock.Hold and lock.Keep,
// and the terms of lock/election's Lead, as OpenTelemetry spans and
// metrics. [Wrap] installs one; [NewHook] makes
// one to install with lock.WithHooks beside hooks of your own (the zero
// Hook is not usable). It is safe for concurrent use.
type Hook struct {
	// tracer is nil when the TracerProvider is the no-op one: no span can
	// ever record, so none is started.
	tracer    trace.Tracer
	inst      *instruments
	held      *heldTracker
	rawKeys   bool
	filters   []Filter                // all must return true for a span to start
	startOpts []trace.SpanStartOption // span kind and the WithSpanAttributes
}

var _ lock.Hook = (*Hook)(nil)

// Wrap returns b with OpenTelemetry spans and metrics for every operation:
// lock.WithHooks(b, NewHook(b.Capabilities().Backend, opts...)). Use the
// result wherever b was used (lock.Do, lock.Acquire, the HTTP and job
// middleware). It has exactly b's extensions: it is a lock.IDBackend, a
// lock.Recorder, both or neither as b is, so lock.Acquire queues, limits
// and keeps leases alive in batches through it exactly as on b. b must not
// be nil.
//
// The spans and metrics never carry a raw key (only its lockdriver.HashKey,
// unless WithRawKeys) and never a lock id (only its hash). Contention and
// a lease that is not held are outcomes, with span status Unset; only
// system failures set status Error. Calls with a nil context go to b,
// which rejects them, unobserved. WithFilter skips the spans of chosen
// operations (their metrics stay); WithSpanAttributes adds attributes of
// your own to every span.
func Wrap(b lock.Backend, opts ...Option) lock.Backend {
	if b == nil {
		panic("otellock: Wrap(nil)")
	}
	return lock.WithHooks(b, NewHook(b.Capabilities().Backend, opts...))
}

// NewHook returns the hook that [Wrap] installs, for a backend whose
// Capabilities().Backend is backend (the syncguard.backend attribute of
// every span and measurement, such as "redis"). Install it with
// lock.WithHooks, as many hooks as you like: the first is the outermost,
// so a hook listed before it sees an operation before its span starts.
// Give each backend a hook of its own, made for its name; the providers
// are read now (see WithTracerProvider).
//
// Each operation becomes the span and measurements documented in the
// package comment: an acquisition (lock.OpAcquire) the "syncguard.acquire"
// span, a wait of lock.Acquire (lock.OpWait) the "syncguard.wait" span,
// with an "attempt" event per failed attempt (lock.OpRetry), a lease a
// release handed over (lock.OpGranted) an acquire span with
// syncguard.handoff, a lease lock.Keep lost (lock.OpLeaseLost) a
// "syncguard.lease_lost" event on the span of Keep's context, and a term
// of lock/election's Lead (lock.OpTerm) the "syncguard.term" span.
// Operations with a nil context go on unobserved.
func NewHook(backend string, opts ...Option) *Hook {
	c := newConfig(opts)
	h := &Hook{
		inst:      newInstruments(c.meterProvider, backend),
		held:      newHeldTracker(),
		rawKeys:   c.rawKeys,
		filters:   c.filters,
		startOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)},
	}
	if len(c.spanAttrs) > 0 {
		h.startOpts = append(h.startOpts, trace.WithAttributes(c.spanAttrs...))
	}
	if _, noop := c.tracerProvider.(tracenoop.TracerProvider); !noop {
		h.tracer = c.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version()))
	}
	return h
}

// Operation implements lock.Hook: it returns next, observed.
func (h *Hook) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		if ctx == nil {
			return next(ctx, op)
		}
		switch op.Kind {
		case lock.OpWait:
			return h.wait(ctx, op, next)
		case lock.OpRetry:
			return h.retry(ctx, op, next)
		case lock.OpGranted:
			return h.granted(ctx, op, next)
		case lock.OpLeaseLost:
			return h.leaseLost(ctx, op, next)
		case lock.OpTerm:
			return h.term(ctx, op, next)
		case lock.OpExtendBatch:
			return h.extendBatch(ctx, op, next)
		}
		return h.operation(ctx, op, next)
	}
}
