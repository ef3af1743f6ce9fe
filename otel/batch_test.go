package otellock_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/syncguard-go/syncguard/lock"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestWrapBatchesKeepAlive: leases kept alive through the wrapper of a
// lock.IDBackend are extended in batches (one scheduler, not a goroutine per lease), each
// batch is one span, each lease's extend is in the duration histogram, and
// a lease lost in a batch is reported alone.
func TestWrapBatchesKeepAlive(t *testing.T) {
	inner, rdb := newRedis(t)
	tel := newTelemetry(t)
	w := otellock.Wrap(inner, tel.options()...)
	if _, ok := w.(lock.IDBackend); !ok {
		t.Fatal("Wrap of a lock.IDBackend is not a lock.IDBackend")
	}

	ctx := testCtx(t)
	const n, ttl = 40, 900 * time.Millisecond
	leases := make([]lock.Lease, n)
	for i := range leases {
		l, err := w.Acquire(ctx, "batch"+strconv.Itoa(i), ttl)
		if err != nil {
			t.Fatal(err)
		}
		leases[i] = l
	}
	before := runtime.NumGoroutine()
	held := make([]context.Context, n)
	stops := make([]func() error, n)
	for i, l := range leases {
		held[i], stops[i] = lock.Keep(ctx, w, l)
	}
	if grew := runtime.NumGoroutine() - before; grew >= n/2 {
		t.Errorf("Keep of %d leases started %d goroutines, want a shared scheduler", n, grew)
	}

	// The lease of "batch0" disappears; the others must live on past 2 TTLs.
	if err := rdb.Del(ctx, inner.Prefix()+":batch0").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held[0].Done():
		if cause := context.Cause(held[0]); !errors.Is(cause, lock.ErrLeaseLost) {
			t.Errorf("lost lease: cause %v, want lock.ErrLeaseLost", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the deleted lease was not reported lost")
	}
	time.Sleep(2 * ttl)
	for i := 1; i < n; i++ {
		if err := held[i].Err(); err != nil {
			t.Fatalf("lease %d: %v (%v), want it kept alive", i, err, context.Cause(held[i]))
		}
		if info, err := w.LookupID(ctx, leases[i].ID); err != nil || info == nil {
			t.Fatalf("lease %d: LookupID = %v, %v, want live", i, info, err)
		}
	}
	stopAt := time.Now()
	for _, stop := range stops {
		_ = stop()
	}
	// A batch may still be in flight: its span and its measurements come
	// when it returns. Count once every batch started has ended. A batch
	// whose leases were all stopped while it ran is cancelled (its extends
	// fail Aborted): only the batches that ended before the stops are
	// checked for errors and counts.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		started := 0
		for _, s := range tel.spans.Started() {
			if s.Name() == "syncguard.extend_batch" {
				started++
			}
		}
		if started == len(tel.ended("syncguard.extend_batch")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an extend_batch span never ended")
		}
	}

	batches := slices.DeleteFunc(tel.ended("syncguard.extend_batch"), func(s sdktrace.ReadOnlySpan) bool {
		return !s.EndTime().Before(stopAt)
	})
	if len(batches) == 0 {
		t.Fatal("no syncguard.extend_batch span")
	}
	var size, extended, notHeld int64
	for _, s := range batches {
		a := attrs(s.Attributes())
		sz, _ := strconv.ParseInt(a["syncguard.batch.size"], 10, 64)
		ex, _ := strconv.ParseInt(a["syncguard.batch.extended"], 10, 64)
		nh, _ := strconv.ParseInt(a["syncguard.batch.not_held"], 10, 64)
		size, extended, notHeld = size+sz, extended+ex, notHeld+nh
		if a["syncguard.batch.errors"] != "0" {
			t.Errorf("batch span errors = %s, want 0", a["syncguard.batch.errors"])
		}
	}
	if len(batches) >= int(size) || extended < 2*(n-1) || notHeld != 1 || size != extended+notHeld {
		t.Errorf("%d batches of %d leases in all: %d extended, %d not held; want fewer batches than leases, at least %d extended over two TTLs, 1 not held",
			len(batches), size, extended, notHeld, 2*(n-1))
	}
	if len(tel.ended("syncguard.extend")) != 0 {
		t.Error("leases were extended one by one as well")
	}

	m := tel.metrics(t)
	counts := histCounts(t, m[otellock.OperationDurationMetric])
	if got := counts["syncguard.backend=redis,syncguard.operation=extend,syncguard.outcome=extended"]; got != uint64(extended) {
		t.Errorf("extend durations recorded = %d, want %d (one per extended lease)", got, extended)
	}
	lost := sums(t, m[otellock.LeaseLostMetric])
	var total int64
	for _, v := range lost {
		total += v
	}
	if total != 1 {
		t.Errorf("lease.lost = %v, want 1", lost)
	}
}
