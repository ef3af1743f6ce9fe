package otellock

import (
	"context"

	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/syncguard-go/syncguard/lock"
)

// Hook is a lock.Hook that records the operations of a backend, the waits
// and lost leases of package lock, and the terms of lock/election, as
// spans and metrics. Wrap installs one; NewHook makes one. The zero Hook is
// not usable. It is safe for concurrent use.
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

// Wrap returns b with OpenTelemetry spans and metrics for every operation.
// It is lock.WithHooks(b, NewHook(b.Capabilities().Backend, opts...)). The
// result has exactly b's extensions, so lock.Acquire queues, limits and
// batches keep-alives through it as on b. b must not be nil.
//
// Contention and a lease that is not held are outcomes, with span status
// Unset; only system failures set status Error. Calls with a nil context
// go to b unobserved.
func Wrap(b lock.Backend, opts ...Option) lock.Backend {
	if b == nil {
		panic("otellock: Wrap(nil)")
	}
	return lock.WithHooks(b, NewHook(b.Capabilities().Backend, opts...))
}

// NewHook returns the hook that Wrap installs, for a backend named backend,
// such as "redis". Install it with lock.WithHooks; the first hook listed is
// the outermost. Give each backend a hook of its own. The providers are
// read now. docs/opentelemetry.md maps each lock.OpKind to its span.
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
		case lock.OpAcquireMulti, lock.OpReleaseMulti:
			return h.multi(ctx, op, next)
		}
		return h.operation(ctx, op, next)
	}
}
