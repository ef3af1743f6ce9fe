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

// newConfig applies opts over the defaults, read when Wrap or NewHook is
// called.
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

// WithTracerProvider sets the TracerProvider; nil means the global one of
// the moment.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tracerProvider = tp })
}

// WithMeterProvider sets the MeterProvider; nil means the global one of
// the moment.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

// WithRawKeys adds the raw lock key to spans, as syncguard.key. No option
// records a raw lock id.
func WithRawKeys() Option {
	return optionFunc(func(c *config) { c.rawKeys = true })
}

// Filter reports whether a call of operation op, made with ctx, gets a
// span. It must be cheap and safe for concurrent use.
type Filter func(ctx context.Context, kind lock.OpKind) bool

// WithFilter skips the span of every call for which f returns false. A
// filtered call is still measured.
func WithFilter(f Filter) Option {
	return optionFunc(func(c *config) {
		if f != nil {
			c.filters = append(c.filters, f)
		}
	})
}

// WithSpanAttributes adds attrs to every span the hook starts. The hook's
// own attributes take precedence.
func WithSpanAttributes(attrs ...attribute.KeyValue) Option {
	return optionFunc(func(c *config) { c.spanAttrs = append(c.spanAttrs, attrs...) })
}
