package otellock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/locktest"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestConformance runs lock/locktest's suite, unchanged, on the wrapped
// Redis backend with a recording SDK: the hook must not change what
// any call returns.
func TestConformance(t *testing.T) {
	tel := newTelemetry(t)
	locktest.Run(t, func(t *testing.T) lock.Backend {
		inner, _ := newRedis(t)
		return otellock.Wrap(inner, tel.options(otellock.WithRawKeys())...)
	})
	if len(tel.spans.Ended()) == 0 {
		t.Error("the suite ran through the wrapper but no span was recorded")
	}
}
