package otellock

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope name of the spans and metrics
// this package emits: its import path.
const ScopeName = "github.com/syncguard-go/syncguard/otel"

// Option configures [Wrap].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	rawKeys        bool
}

// newConfig applies opts over the defaults: the global providers, read
// now, at Wrap time.
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
// it (or with nil), Wrap uses the global provider (otel.GetTracerProvider)
// as registered when Wrap is called.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tracerProvider = tp })
}

// WithMeterProvider sets the MeterProvider the metrics come from. Without
// it (or with nil), Wrap uses the global provider (otel.GetMeterProvider)
// as registered when Wrap is called.
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
