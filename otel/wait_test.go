package otellock_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/codes"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestDoWaitSpan runs lock.Do on a held key that frees up after a while:
// one "syncguard.wait" span covers the wait, with an event per failed
// attempt and every attempt's acquire span as its child.
func TestDoWaitSpan(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newPollingRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	ctx := testCtx(t)
	key := uniqueKey("wait")

	holder, err := inner.Acquire(ctx, key, 10*time.Second) // unwrapped: records nothing
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() {
		time.Sleep(150 * time.Millisecond)
		released <- inner.Release(context.Background(), holder.ID)
	}()
	var lease lock.Lease
	err = lock.Do(ctx, b, key, func(_ context.Context, l lock.Lease) error {
		lease = l
		return nil
	}, lock.WithRetry(lock.Retry{MaxRetries: 100, BaseDelay: 20 * time.Millisecond, Fixed: true, NoJitter: true}),
		lock.WithWait(5*time.Second))
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	if err := <-released; err != nil {
		t.Fatalf("holder's Release: %v", err)
	}

	waits := tel.ended("syncguard.wait")
	if len(waits) != 1 {
		t.Fatalf("wait spans: got %d, want 1", len(waits))
	}
	w := waits[0]
	var events int
	for i, e := range w.Events() {
		if e.Name != "attempt" {
			continue
		}
		events++
		a := attrs(e.Attributes)
		if a["syncguard.attempt"] != strconv.Itoa(i+1) || a["syncguard.outcome"] != "locked" {
			t.Errorf("event %d: got %v, want attempt %d, outcome locked", i, a, i+1)
		}
		if next, _ := strconv.ParseFloat(a["syncguard.wait.next"], 64); next != 0.02 {
			t.Errorf("event %d: wait.next = %v, want 0.02", i, a["syncguard.wait.next"])
		}
	}
	if events < 3 {
		t.Errorf("attempt events: got %d, want at least 3 (150ms held, 20ms apart)", events)
	}
	a := attrs(w.Attributes())
	want := map[string]string{
		"syncguard.outcome": "acquired", "syncguard.attempts": strconv.Itoa(events + 1),
		"syncguard.fence": string(lease.Fence), "syncguard.key.hash": lockdriver.HashKey(key),
		"syncguard.lock_id.hash": lockdriver.HashKey(lease.ID), "syncguard.backend": "redis",
	}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("wait attribute %s: got %q, want %q", k, a[k], v)
		}
	}
	if d, _ := strconv.ParseFloat(a["syncguard.wait.duration"], 64); d < 0.1 {
		t.Errorf("wait.duration = %v, want at least 0.1 (the key was held 150ms)", a["syncguard.wait.duration"])
	}
	if w.Status().Code != codes.Unset {
		t.Errorf("wait status: got %v, want Unset", w.Status().Code)
	}

	var children, locked int
	for _, s := range tel.ended("syncguard.acquire") {
		if s.Parent().SpanID() != w.SpanContext().SpanID() {
			t.Errorf("acquire span with parent %v, want the wait span %v", s.Parent().SpanID(), w.SpanContext().SpanID())
			continue
		}
		children++
		if attrs(s.Attributes())["syncguard.outcome"] == "locked" {
			locked++
		}
	}
	if children != events+1 || locked != events {
		t.Errorf("acquire spans under the wait: got %d (%d locked), want %d (%d locked)", children, locked, events+1, events)
	}

	m := tel.metrics(t)
	if got := histCounts(t, m[otellock.WaitDurationMetric])["syncguard.backend=redis,syncguard.outcome=acquired"]; got != 1 {
		t.Errorf("wait.duration{acquired}: got count %d, want 1", got)
	}
	if got := sums(t, m[otellock.ContentionMetric])["syncguard.backend=redis"]; got != int64(events) {
		t.Errorf("contention: got %d, want %d", got, events)
	}
}

// TestWaitTimeout checks a wait that gives up: outcome timeout, status
// Unset (contention is not a failure), and a last attempt with no pause.
func TestWaitTimeout(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newPollingRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	ctx := testCtx(t)
	key := uniqueKey("timeout")
	if _, err := inner.Acquire(ctx, key, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	_, err := lock.Acquire(ctx, b, key, lock.WithRetry(lock.Retry{MaxRetries: 2, BaseDelay: 5 * time.Millisecond}))
	if lock.CodeOf(err) != lock.CodeAcquisitionTimeout {
		t.Fatalf("Acquire: %v, want AcquisitionTimeout", err)
	}
	waits := tel.ended("syncguard.wait")
	if len(waits) != 1 {
		t.Fatalf("wait spans: got %d, want 1", len(waits))
	}
	w := waits[0]
	a := attrs(w.Attributes())
	if a["syncguard.outcome"] != "timeout" || a["syncguard.attempts"] != "3" {
		t.Errorf("wait: outcome %q, attempts %q; want timeout, 3", a["syncguard.outcome"], a["syncguard.attempts"])
	}
	if w.Status().Code != codes.Unset {
		t.Errorf("wait status: got %v, want Unset", w.Status().Code)
	}
	ev := w.Events()
	if len(ev) != 3 || attrs(ev[2].Attributes)["syncguard.wait.next"] != "0" {
		t.Errorf("events: got %v, want 3 attempts, the last with wait.next 0", ev)
	}
	got := histCounts(t, tel.metrics(t)[otellock.WaitDurationMetric])
	if got["syncguard.backend=redis,syncguard.outcome=timeout"] != 1 {
		t.Errorf("wait.duration: got %v, want one timeout", got)
	}
}

// TestLeaseLost deletes the lock key in Redis while lock.Do runs: the
// heartbeat finds the lease gone, and the loss shows as an event on the
// caller's span, in the heartbeat's batch span and in the lost-lease
// counter.
func TestLeaseLost(t *testing.T) {
	tel := newTelemetry(t)
	inner, client := newRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	ctx, job := tel.tp.Tracer("test").Start(testCtx(t), "job")
	key := uniqueKey("lost")

	var fence lock.Fence
	err := lock.Do(ctx, b, key, func(ctx context.Context, l lock.Lease) error {
		fence = l.Fence
		if err := client.Del(ctx, inner.Prefix()+":"+key).Err(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Second):
			return errors.New("the lease loss went unnoticed")
		}
	}, lock.WithTTL(900*time.Millisecond))
	job.End()
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("Do: %v, want ErrLeaseLost", err)
	}

	var lost int
	for _, e := range tel.ended("job")[0].Events() {
		if e.Name != "syncguard.lease_lost" {
			continue
		}
		lost++
		a := attrs(e.Attributes)
		if a["syncguard.key.hash"] != lockdriver.HashKey(key) || a["syncguard.fence"] != string(fence) || a["syncguard.reason"] == "" {
			t.Errorf("lease_lost event: got %v, want the key hash, fence %s and a reason", a, fence)
		}
	}
	if lost != 1 {
		t.Errorf("lease_lost events on the caller's span: got %d, want 1", lost)
	}
	// The Redis backend extends in batches: the heartbeat that found the
	// lease gone is a batch span counting it as not held, with status Unset.
	var notHeld int
	for _, s := range tel.ended("syncguard.extend_batch") {
		if attrs(s.Attributes())["syncguard.batch.not_held"] == "1" {
			notHeld++
			if s.Status().Code != codes.Unset {
				t.Errorf("the batch that found the lease gone has status %v, want Unset", s.Status().Code)
			}
		}
	}
	if notHeld != 1 {
		t.Errorf("extend_batch spans finding the lease gone: got %d, want 1", notHeld)
	}
	m := tel.metrics(t)[otellock.LeaseLostMetric]
	if m.Unit != "{lease}" {
		t.Errorf("%s unit: got %q, want {lease}", m.Name, m.Unit)
	}
	if got := sums(t, m)["syncguard.backend=redis"]; got != 1 {
		t.Errorf("lease.lost: got %d, want 1", got)
	}
}
