package otellock_test

import (
	"context"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/multilock"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestMultiSpans: a multi-key cycle through the wrapper is one
// syncguard.acquire_multi span and one syncguard.release_multi span, each
// with the number of keys (syncguard.lock.keys) and its outcome.
func TestMultiSpans(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	keys := []string{uniqueKey("{m}a"), uniqueKey("{m}b"), uniqueKey("{m}c")}
	err := multilock.Do(testCtx(t), b, keys, func(context.Context, []lock.Lease) error { return nil })
	if err != nil {
		t.Fatalf("multilock.Do: %v", err)
	}
	for name, outcome := range map[string]string{"syncguard.acquire_multi": "acquired", "syncguard.release_multi": "released"} {
		spans := tel.ended(name)
		if len(spans) != 1 {
			t.Fatalf("%d %s spans, want 1", len(spans), name)
		}
		got := attrs(spans[0].Attributes())
		if got["syncguard.lock.keys"] != "3" || got["syncguard.outcome"] != outcome {
			t.Errorf("%s attributes %v, want syncguard.lock.keys 3 and outcome %s", name, got, outcome)
		}
	}
}
