package otellock_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/syncguard-go/syncguard/internal/redistest"
	"github.com/syncguard-go/syncguard/lock"
	otellock "github.com/syncguard-go/syncguard/otel"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// TestWrapForwardsCompleter: a wrapped backend that implements
// lock.Completer still does, so asynq's done markers work with tracing.
func TestWrapForwardsCompleter(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	inner, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
	w := otellock.Wrap(inner, otellock.WithTracerProvider(tp))
	c, ok := w.(lock.Completer)
	if !ok {
		t.Fatal("Wrap of a lock.Completer is not a lock.Completer")
	}
	ctx := context.Background()
	l, err := w.Acquire(ctx, "job", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseDone(ctx, l, time.Minute); err != nil {
		t.Fatal(err)
	}
	if done, err := c.IsDone(ctx, "job"); err != nil || !done {
		t.Errorf("IsDone = %v, %v; want true", done, err)
	}
	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
	}
	if len(names) != 2 || names[1] != "syncguard.release" {
		t.Errorf("spans = %v, want acquire then release", names)
	}

	// A backend without Completer stays without it.
	if _, ok := otellock.Wrap(plainBackend{inner}).(lock.Completer); ok {
		t.Error("Wrap invented a lock.Completer")
	}
}

// plainBackend hides everything but lock.Backend.
type plainBackend struct{ lock.Backend }
