package otellock_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestLimitTelemetry takes the two slots of a limit of 2 through the
// wrapper, fails to take a third, and looks the limit up: the acquire
// spans carry syncguard.slot and syncguard.limit, and the acquire, wait
// and contention metrics carry the limit (never the key).
func TestLimitTelemetry(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	ctx := testCtx(t)
	key := uniqueKey("limit")

	var leases []lock.Lease
	for range 2 {
		l, err := lock.Acquire(ctx, b, key, lock.WithLimit(2), lock.WithTTL(10*time.Second))
		if err != nil {
			t.Fatalf("slot %d: %v", len(leases)+1, err)
		}
		leases = append(leases, l)
	}
	if _, err := lock.Acquire(ctx, b, key, lock.WithLimit(2), lock.WithWait(0)); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("third slot of 2: got %v, want ErrLocked", err)
	}
	info, err := b.(lock.IDBackend).LookupLimit(ctx, key)
	if err != nil || info == nil || len(info.Holders) != 2 {
		t.Fatalf("LookupLimit = %+v, %v; want 2 holders", info, err)
	}

	acquires := tel.ended("syncguard.acquire")
	if len(acquires) != 3 {
		t.Fatalf("acquire spans: got %d, want 3", len(acquires))
	}
	for i, s := range acquires {
		a := attrs(s.Attributes())
		want := map[string]string{"syncguard.slot": "true", "syncguard.limit": "2",
			"syncguard.key.hash": lockdriver.HashKey(key), "syncguard.outcome": "acquired"}
		if i < 2 {
			want["syncguard.fence"] = string(leases[i].Fence)
		} else {
			want["syncguard.outcome"] = "locked"
		}
		for k, v := range want {
			if a[k] != v {
				t.Errorf("acquire span %d: %s = %q, want %q", i, k, a[k], v)
			}
		}
	}
	waits := tel.ended("syncguard.wait")
	if len(waits) != 3 || attrs(waits[0].Attributes())["syncguard.limit"] != "2" {
		t.Errorf("wait spans: got %d, the first with limit %q; want 3 with limit 2", len(waits), attrs(waits[0].Attributes())["syncguard.limit"])
	}
	lookup := tel.last(t)
	if a := attrs(lookup.Attributes()); lookup.Name() != "syncguard.lookup_limit" || a["syncguard.lookup.by"] != "limit" ||
		a["syncguard.limit"] != "2" || a["syncguard.limit.holders"] != "2" {
		t.Errorf("last span %s %v; want a lookup by limit finding 2 holders of 2", lookup.Name(), a)
	}

	m := tel.metrics(t)
	ops := histCounts(t, m[otellock.OperationDurationMetric])
	if got := ops["syncguard.backend=redis,syncguard.limit=2,syncguard.operation=acquire,syncguard.outcome=acquired"]; got != 2 {
		t.Errorf("slot acquires measured: got %d, want 2 (%v)", got, ops)
	}
	if got := ops["syncguard.backend=redis,syncguard.limit=2,syncguard.operation=acquire,syncguard.outcome=locked"]; got != 1 {
		t.Errorf("slot acquires over the limit measured: got %d, want 1 (%v)", got, ops)
	}
	waited := histCounts(t, m[otellock.WaitDurationMetric])
	if got := waited["syncguard.backend=redis,syncguard.limit=2,syncguard.outcome=acquired"]; got != 2 {
		t.Errorf("slot waits measured: got %d, want 2 (%v)", got, waited)
	}
	if got := sums(t, m[otellock.ContentionMetric])["syncguard.backend=redis,syncguard.limit=2"]; got != 1 {
		t.Errorf("slot contention: got %d, want 1", got)
	}
	for _, l := range leases {
		if err := b.Release(ctx, l.ID); err != nil {
			t.Errorf("Release of a slot: %v", err)
		}
	}
	held := histCounts(t, tel.metrics(t)[otellock.HeldDurationMetric])
	if got := held["syncguard.backend=redis"]; got != 2 {
		t.Errorf("held durations of slots: got %d, want 2", got)
	}
}

// TestLimitUnsupported: the wrapper of a backend without limits (not a
// lock.IDBackend) does not claim them, so lock.Acquire rejects WithLimit
// with its InvalidArgument error before any attempt, as for the bare
// backend.
func TestLimitUnsupported(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	b := otellock.Wrap(plainBackend{inner}, tel.options()...)
	if _, ok := b.(lock.IDBackend); ok {
		t.Fatal("Wrap of a plain lock.Backend is a lock.IDBackend")
	}
	ctx := testCtx(t)
	_, err := lock.Acquire(ctx, b, "k", lock.WithLimit(2))
	if lock.CodeOf(err) != lock.CodeInvalidArgument || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Acquire with a limit: got %v, want InvalidArgument matching ErrUnsupported", err)
	}
	if n := len(tel.ended("syncguard.acquire")) + len(tel.ended("syncguard.lookup_limit")); n != 0 {
		t.Errorf("%d acquire or lookup spans for a call that did nothing", n)
	}
}

// TestHandoffSpan: a lease a release hands over to a queued waiter (a
// lock, and a slot) gets an acquire span under the wait span, marked
// syncguard.handoff, with its fence; the hand-off is counted, and its
// release measures how long it was held. With the holder's lease taken
// and released through the wrapper too, both leases are measured.
func TestHandoffSpan(t *testing.T) {
	for _, tt := range []struct {
		desc    string
		opts    []lock.Option
		wrapped bool // the holder acquires and releases through the wrapper
	}{
		{desc: "lock"},
		{desc: "slot", opts: []lock.Option{lock.WithLimit(1)}},
		{desc: "lock held through the wrapper", wrapped: true},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			tel := newTelemetry(t)
			inner, _ := newRedis(t)
			t.Cleanup(func() { inner.Close() })
			b := otellock.Wrap(inner, tel.options()...)
			ctx := testCtx(t)
			key := uniqueKey("handoff")
			var holderB lock.Backend = inner // unwrapped: records nothing
			if tt.wrapped {
				holderB = b
			}
			var holder lock.Lease
			var err error
			if tt.opts != nil {
				holder, err = lock.Acquire(ctx, holderB, key, tt.opts...)
			} else {
				// Not lock.Acquire, whose wait span would be a second one.
				holder, err = holderB.Acquire(ctx, key, time.Minute)
			}
			if err != nil {
				t.Fatal(err)
			}
			released := make(chan struct{})
			go func() {
				defer close(released)
				time.Sleep(100 * time.Millisecond) // the waiter has queued by then
				_ = holderB.Release(context.Background(), holder.ID)
			}()
			// The backoff (10 s) outlasts the test: only a hand-off (or a
			// request for an attempt, which would fail the test) ends the wait.
			opts := append([]lock.Option{lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Second, NoJitter: true}),
				lock.WithWait(20 * time.Second)}, tt.opts...)
			l, err := lock.Acquire(ctx, b, key, opts...)
			if err != nil {
				t.Fatal(err)
			}
			// The hand-off can reach the waiter before the holder's
			// Release has returned (and ended its span, counted its hold).
			<-released
			if err := b.Release(ctx, l.ID); err != nil {
				t.Fatal(err)
			}

			waits := tel.ended("syncguard.wait")
			if len(waits) != 1 {
				t.Fatalf("wait spans: got %d, want 1", len(waits))
			}
			// The attempts (the backend may ask for one more once it
			// listens for hand-offs), all busy, then the hand-off.
			acquires := tel.ended("syncguard.acquire")
			if tt.wrapped {
				if a := attrs(acquires[0].Attributes()); a["syncguard.fence"] != string(holder.Fence) {
					t.Fatalf("first acquire span: %v; want the holder's, fence %s", a, holder.Fence)
				}
				acquires = acquires[1:]
			}
			if len(acquires) < 2 {
				t.Fatalf("acquire spans: got %d, want the attempts and the hand-off", len(acquires))
			}
			for i, s := range acquires[:len(acquires)-1] {
				if a := attrs(s.Attributes()); a["syncguard.outcome"] != "locked" || a["syncguard.handoff"] != "" {
					t.Errorf("acquire span %d: %v; want locked, no hand-off", i, a)
				}
			}
			wa := attrs(waits[0].Attributes())
			if wa["syncguard.outcome"] != "acquired" || wa["syncguard.attempts"] != strconv.Itoa(len(acquires)-1) {
				t.Errorf("wait span: %v; want acquired after %d attempts", wa, len(acquires)-1)
			}
			h := acquires[len(acquires)-1]
			a := attrs(h.Attributes())
			want := map[string]string{"syncguard.outcome": "acquired", "syncguard.handoff": "true",
				"syncguard.fence": string(l.Fence), "syncguard.lock_id.hash": lockdriver.HashKey(l.ID),
				"syncguard.key.hash": lockdriver.HashKey(key)}
			if tt.opts != nil {
				want["syncguard.slot"], want["syncguard.limit"] = "true", "1"
			}
			for k, v := range want {
				if a[k] != v {
					t.Errorf("hand-off span: %s = %q, want %q", k, a[k], v)
				}
			}
			if h.Parent().SpanID() != waits[0].SpanContext().SpanID() {
				t.Errorf("hand-off span's parent is not the wait span")
			}
			m := tel.metrics(t)
			wantSet := "syncguard.backend=redis"
			if tt.opts != nil {
				wantSet += ",syncguard.limit=1"
			}
			if got := sums(t, m[otellock.HandoffMetric])[wantSet]; got != 1 {
				t.Errorf("hand-offs counted under %s: got %d, want 1", wantSet, got)
			}
			if tt.wrapped {
				// The holder's release says it handed the lock on, and to
				// which fence; the waiter's own release, nobody waiting,
				// does not.
				rels := tel.ended("syncguard.release")
				if len(rels) != 2 {
					t.Fatalf("release spans: got %d, want 2", len(rels))
				}
				if a := attrs(rels[0].Attributes()); a["syncguard.handoff"] != "true" || a["syncguard.handoff.fence"] != string(l.Fence) {
					t.Errorf("holder's release span: %v; want syncguard.handoff=true, syncguard.handoff.fence=%s", a, l.Fence)
				}
				if a := attrs(rels[1].Attributes()); a["syncguard.handoff"] != "" || a["syncguard.handoff.fence"] != "" {
					t.Errorf("waiter's release span: %v; want no hand-off", a)
				}
			}
			wantHeld := uint64(1) // the handed-over lease's
			if tt.wrapped {
				wantHeld = 2 // and the holder's
			}
			if got := histCounts(t, m[otellock.HeldDurationMetric])["syncguard.backend=redis"]; got != wantHeld {
				t.Errorf("held durations: got %d, want %d", got, wantHeld)
			}
		})
	}
}

// TestHandoffSpanWaitFiltered: with the wait spans filtered out and no
// metrics, a hand-off still gets its acquire span.
func TestHandoffSpanWaitFiltered(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	t.Cleanup(func() { inner.Close() })
	b := otellock.Wrap(inner, otellock.WithTracerProvider(tel.tp), otellock.WithMeterProvider(metricnoop.NewMeterProvider()),
		otellock.WithFilter(func(_ context.Context, op lock.OpKind) bool { return op != lock.OpWait }))
	ctx := testCtx(t)
	key := uniqueKey("handoff")
	holder, err := inner.Acquire(ctx, key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		_ = inner.Release(context.Background(), holder.ID)
	}()
	l, err := lock.Acquire(ctx, b, key, lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Second, NoJitter: true}), lock.WithWait(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	acquires := tel.ended("syncguard.acquire")
	if len(tel.ended("syncguard.wait")) != 0 || len(acquires) == 0 {
		t.Fatalf("%d wait and %d acquire spans; want none and some", len(tel.ended("syncguard.wait")), len(acquires))
	}
	if a := attrs(acquires[len(acquires)-1].Attributes()); a["syncguard.handoff"] != "true" || a["syncguard.fence"] != string(l.Fence) {
		t.Errorf("last acquire span: %v; want the hand-off with fence %s", a, l.Fence)
	}
}
