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
// it, or with nil, the hook uses the global provider of the moment Wrap or
// NewHook is called.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tracerProvider = tp })
}

// WithMeterProvider sets the MeterProvider the metrics come from. Without
// it, or with nil, the hook uses the global provider of the moment Wrap or
// NewHook is called.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

// WithRawKeys adds the raw lock key to spans, as syncguard.key. Keys often
// carry user or order ids, so this is off by default. Metrics never carry
// keys, and no option records a raw lock id: it releases the lock.
func WithRawKeys() Option {
	return optionFunc(func(c *config) { c.rawKeys = true })
}

// Filter reports whether a call of operation op, made with ctx, gets a
// span. ctx is the caller's context, so a filter can decide by what the
// application put there, such as a health-check marker. It is not given
// the lock key. It runs before every span: keep it cheap and safe for
// concurrent use.
type Filter func(ctx context.Context, kind lock.OpKind) bool

// WithFilter skips the span of every call for which f returns false. With
// several filters, all must return true; a nil f is ignored. A filtered
// call is still measured, so dashboards do not change.
func WithFilter(f Filter) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.filters = append(c.filters, f)
		}
	})
}

// WithSpanAttributes adds attrs, such as a deployment or a tenant, to every
// span the hook starts, so samplers see them too. The hook's own
// attributes take precedence. Metrics and the lease_lost event do not get
// them.
func WithSpanAttributes(attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) { c.spanAttrs = append(c.spanAttrs, attrs...) })
}
