package otellock

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock"
)

// ScopeName is the instrumentation scope name of the spans and metrics
// this package emits: its import path.
const ScopeName = "github.com/syncguard-go/syncguard/otel"

// Option configures [Wrap] and [NewHook].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	rawKeys        bool
	filters        []Filter
	spanAttrs      []attribute.KeyValue
}

// newConfig applies opts over the defaults: the global providers, read
// now, when Wrap or NewHook is called.
func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	return c
}

// WithTracerProvider sets the TracerProvider the spans come from. Without
// it (or with nil), the hook uses the global provider
// (otel.GetTracerProvider) as registered when Wrap or NewHook is called.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tracerProvider = tp })
}

// WithMeterProvider sets the MeterProvider the metrics come from. Without
// it (or with nil), the hook uses the global provider
// (otel.GetMeterProvider) as registered when Wrap or NewHook is called.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

// WithRawKeys adds the raw lock key to spans, as the attribute
// syncguard.key, next to its hash. Keys often carry user or order ids, so
// this is off by default; turn it on only where the tracing backend may
// store them. Metrics never carry keys, and no option ever records a raw
// lock id: it is the credential that releases the lock.
func WithRawKeys() Option {
	return optionFunc(func(c *config) { c.rawKeys = true })
}

// Filter reports whether a call of operation op, made with ctx, gets a
// span: true to trace it, false to skip it. ctx is the caller's context (the
// scheduler's for lock.OpExtendBatch), so a filter can also decide by
// what the application put there, such as a marker for health checks.
//
// A filter is not given the lock key: release, extend and lookup by id
// know only the lock id, so a filter on keys would trace one half of a
// lease and not the other. A filter runs on every operation of a hook whose
// TracerProvider is not the no-op one, before the span starts; keep it
// cheap and safe for concurrent use.
type Filter func(ctx context.Context, kind lock.OpKind) bool

// WithFilter skips the span of every call for which f returns false; see
// Filter. With several WithFilter options a call is traced only when all
// of them return true; a nil f is ignored.
//
// A filtered call is still measured: its duration, outcome, contention,
// held time and lost lease go into the metrics as before, so dashboards
// and alerts do not change when traces are trimmed (metrics are
// aggregated, with a fixed set of attributes, and cheap). The
// syncguard.lease_lost event, which goes on the caller's span, is not
// filtered either. When lock.OpWait is filtered, the attempts' acquire spans become children
// of the caller's span; when lock.OpAcquire is filtered, the wait span
// keeps its attempt events.
func WithFilter(f Filter) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.filters = append(c.filters, f)
		}
	})
}

// WithSpanAttributes adds attrs to every span the hook starts (the
// operation, wait and batch spans), set when the span starts, so samplers
// see them too: a deployment, a tenant or a component name, for
// instance. Attributes of the same key that the hook sets itself
// (syncguard.*, error.type) take precedence. Several WithSpanAttributes
// options add up. The attributes are not added to metrics, nor to the
// lease_lost event, which goes on the caller's span.
func WithSpanAttributes(attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) { c.spanAttrs = append(c.spanAttrs, attrs...) })
}
