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

// WithFilter skips the span of every call for which f returns false (all
// of several filters must return true; a nil f is ignored). A filtered
// call is still measured, so dashboards do not change when traces are
// trimmed; without a wait span the attempts' acquire spans are children of
// the caller's. See docs/opentelemetry.md.
func WithFilter(f Filter) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.filters = append(c.filters, f)
		}
	})
}

// WithSpanAttributes adds attrs (a deployment, a tenant, a component) to
// every span the hook starts, when it starts, so samplers see them too;
// the hook's own attributes take precedence, and several options add up.
// Metrics and the lease_lost event (on the caller's span) do not get them.
func WithSpanAttributes(attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) { c.spanAttrs = append(c.spanAttrs, attrs...) })
}
