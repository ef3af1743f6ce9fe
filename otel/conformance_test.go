package otellock_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/locktest"
	otellock "github.com/syncguard-go/syncguard/otel"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestConformance runs lock/locktest's suite, unchanged, on the wrapped
// Redis backend with a recording SDK: the hook must not change what
// any call returns.
func TestConformance(t *testing.T) {
	// Without a Redis every subtest of the suite skips, and the span check
	// below would fail for want of spans: skip (or fail under
	// SYNCGUARD_REQUIRE_REDIS=1) here instead, naming the missing server.
	redistest.Shared(t)
	tel := newTelemetry(t)
	locktest.Run(t, func(t *testing.T) lock.Backend {
		inner, _ := newRedis(t)
		return otellock.Wrap(inner, tel.options(otellock.WithRawKeys())...)
	})
	if len(tel.spans.Ended()) == 0 {
		t.Error("the suite ran through the wrapper but no span was recorded")
	}
}
