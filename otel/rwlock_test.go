package otellock_test

import (
	"context"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestReadWriteSpansCarryTheMode: a read-write lock taken through the
// wrapper leaves its wait, acquire and release spans, each with
// syncguard.lock.mode.
func TestReadWriteSpansCarryTheMode(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	key := uniqueKey("cfg")
	fn := func(context.Context, lock.Lease) error { return nil }
	if err := rwlock.Read(testCtx(t), b, key, fn); err != nil {
		t.Fatalf("Read: %v", err)
	}
	if err := rwlock.Write(testCtx(t), b, key, fn); err != nil {
		t.Fatalf("Write: %v", err)
	}
	for _, name := range []string{"syncguard.wait", "syncguard.acquire", "syncguard.release"} {
		spans := tel.ended(name)
		if len(spans) != 2 {
			t.Fatalf("%d %s spans, want 2 (a read, a write)", len(spans), name)
		}
		for i, want := range []string{"read", "write"} {
			got := ""
			for _, a := range spans[i].Attributes() {
				if a.Key == otellock.ModeKey {
					got = a.Value.AsString()
				}
			}
			if got != want {
				t.Errorf("%s span %d: syncguard.lock.mode = %q, want %q", name, i, got, want)
			}
		}
	}
}
