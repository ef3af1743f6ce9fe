package otellock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/syncguard-go/syncguard/lock"
	otellock "github.com/syncguard-go/syncguard/otel"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestWrapRecorder: a wrapped lock.Recorder still is one, so asynq's done
// markers and the middleware's replayed records work with tracing; its
// releases with a mark are release spans, its reads spans of their own.
func TestWrapRecorder(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	inner, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
	w := otellock.Wrap(inner, otellock.WithTracerProvider(tp))
	c, ok := w.(lock.Recorder)
	if !ok {
		t.Fatal("Wrap of a lock.Recorder is not a lock.Recorder")
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
	if strings.Join(names, " ") != "syncguard.acquire syncguard.release_done syncguard.is_done" {
		t.Errorf("spans = %v, want acquire, release_done, is_done", names)
	}
	if out := attrOf(rec.Ended()[2], "syncguard.outcome"); out != "found" {
		t.Errorf("is_done outcome = %q, want found", out)
	}

	// Records too, observed as a release_record.
	r := c
	l, err = w.Acquire(ctx, "req", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ReleaseRecord(ctx, l, []byte("201"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := r.Record(ctx, "req"); err != nil || !ok || string(got) != "201" {
		t.Errorf("Record = %q, %v, %v; want 201", got, ok, err)
	}
	// The record read of replay mode is a span of its own (not only a
	// bare evalsha client span).
	if n := len(rec.Ended()); n != 6 || rec.Ended()[4].Name() != "syncguard.release_record" || rec.Ended()[5].Name() != "syncguard.record" {
		t.Errorf("%d spans, want 6 ending with a release_record and a record read", n)
	} else if out := attrOf(rec.Ended()[5], "syncguard.outcome"); out != "found" {
		t.Errorf("record outcome = %q, want found", out)
	}
	if _, ok, _ := r.Record(ctx, "none"); ok {
		t.Error("Record of a key without one found one")
	}
	if out := attrOf(rec.Ended()[len(rec.Ended())-1], "syncguard.outcome"); out != "not_found" {
		t.Errorf("record outcome of a key without one = %q, want not_found", out)
	}
}

// TestWrapAcquireMarked: a wrapped Recorder's AcquireRecord and
// AcquireDone pass through, each an acquire span: outcome acquired with
// its fence when it took the key, found when it answered with the record
// or the done marker (no fence, nothing held).
func TestWrapAcquireMarked(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	inner, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	rec := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
	c := otellock.Wrap(inner, otellock.WithTracerProvider(tp)).(lock.Recorder)
	ctx := context.Background()
	l, r, err := c.AcquireRecord(ctx, "req", time.Minute)
	if err != nil || l.ID == "" || r != nil {
		t.Fatalf("AcquireRecord = %q, %q, %v; want a lease", l.ID, r, err)
	}
	if err := c.ReleaseRecord(ctx, l, []byte("201"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, r, err := c.AcquireRecord(ctx, "req", time.Minute); err != nil || got.ID != "" || string(r) != "201" {
		t.Fatalf("AcquireRecord after the record = %q, %q, %v; want the record", got.ID, r, err)
	}
	d, _, err := c.AcquireDone(ctx, "job", time.Minute)
	if err != nil || d.ID == "" {
		t.Fatalf("AcquireDone = %q, %v; want a lease", d.ID, err)
	}
	if err := c.ReleaseDone(ctx, d, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, done, err := c.AcquireDone(ctx, "job", time.Minute); err != nil || got.ID != "" || !done {
		t.Fatalf("AcquireDone after the marker = %q, %v, %v; want done", got.ID, done, err)
	}
	var got []string
	for _, s := range rec.Ended() {
		got = append(got, s.Name()+"="+attrOf(s, "syncguard.outcome")+"/"+attrOf(s, "syncguard.fence"))
	}
	want := []string{
		"syncguard.acquire=acquired/" + string(l.Fence), "syncguard.release_record=released/",
		"syncguard.acquire=found/", "syncguard.acquire=acquired/" + string(d.Fence),
		"syncguard.release_done=released/", "syncguard.acquire=found/",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("spans = %v, want %v", got, want)
	}
}

// TestWrapQueues: waiters still queue, and get the lock handed over by a
// release, through the wrapper.
func TestWrapQueues(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	inner, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inner.Close() })
	w := otellock.Wrap(inner)
	ctx := context.Background()
	holder, err := w.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Duration, 1)
	go func() {
		l, err := lock.Acquire(ctx, w, "k", lock.WithRetry(lock.Retry{BaseDelay: 5 * time.Second, NoJitter: true}),
			lock.WithWait(20*time.Second))
		if err != nil {
			t.Error(err)
			got <- 0
			return
		}
		released := time.Now()
		_ = w.Release(ctx, l.ID)
		got <- time.Since(released)
	}()
	time.Sleep(300 * time.Millisecond) // let the waiter start waiting
	start := time.Now()
	if err := w.Release(ctx, holder.ID); err != nil {
		t.Fatal(err)
	}
	<-got
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("waiter took %v after the release; want a wake-up, not the 5s poll", d)
	}
}

// attrOf returns the value of span attribute key, "" when absent.
func attrOf(s trace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}
