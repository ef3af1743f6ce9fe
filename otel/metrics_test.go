package otellock_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/syncguard-go/syncguard/lock"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestMetrics checks the counts, units and attributes of every metric
// after a known sequence of calls.
func TestMetrics(t *testing.T) {
	tel := newTelemetry(t)
	inner, _ := newRedis(t)
	b := otellock.Wrap(inner, tel.options()...)
	ctx := testCtx(t)
	key := uniqueKey("metrics")

	l, err := b.Acquire(ctx, key, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := b.Acquire(ctx, key, 10*time.Second); err == nil {
			t.Fatal("second Acquire of a held key succeeded")
		}
	}
	const hold = 50 * time.Millisecond
	time.Sleep(hold)
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l.ID); err == nil {
		t.Fatal("second Release succeeded")
	}
	if err := lock.Do(ctx, b, key, func(context.Context, lock.Lease) error { return nil }); err != nil {
		t.Fatal(err)
	}

	m := tel.metrics(t)
	units := map[string]string{
		otellock.OperationDurationMetric: "s",
		otellock.WaitDurationMetric:      "s",
		otellock.HeldDurationMetric:      "s",
		otellock.ContentionMetric:        "{contention}",
	}
	for name, unit := range units {
		if got, ok := m[name]; !ok {
			t.Errorf("metric %s missing", name)
		} else if got.Unit != unit {
			t.Errorf("%s unit: got %q, want %q", name, got.Unit, unit)
		}
	}

	const be = "syncguard.backend=redis,"
	wantOps := map[string]uint64{
		be + "syncguard.operation=acquire,syncguard.outcome=acquired":  2, // Acquire and Do
		be + "syncguard.operation=acquire,syncguard.outcome=locked":    2,
		be + "syncguard.operation=release,syncguard.outcome=released":  2, // Release and Do
		be + "syncguard.operation=release,syncguard.outcome=not_found": 1,
	}
	gotOps := histCounts(t, m[otellock.OperationDurationMetric])
	if len(gotOps) != len(wantOps) {
		t.Errorf("operation.duration series: got %v, want %v", gotOps, wantOps)
	}
	for k, want := range wantOps {
		if gotOps[k] != want {
			t.Errorf("operation.duration{%s}: got count %d, want %d", k, gotOps[k], want)
		}
	}
	if got := histCounts(t, m[otellock.WaitDurationMetric]); len(got) != 1 || got["syncguard.backend=redis,syncguard.outcome=acquired"] != 1 {
		t.Errorf("wait.duration: got %v, want one acquired wait", got)
	}
	if got := sums(t, m[otellock.ContentionMetric]); len(got) != 1 || got["syncguard.backend=redis"] != 2 {
		t.Errorf("contention: got %v, want 2", got)
	}

	held := m[otellock.HeldDurationMetric].Data.(metricdata.Histogram[float64])
	if len(held.DataPoints) != 1 || held.DataPoints[0].Count != 2 {
		t.Fatalf("held.duration: got %+v, want 2 measurements (Release and Do)", held.DataPoints)
	}
	dp := held.DataPoints[0]
	if max, _ := dp.Max.Value(); max < hold.Seconds() || setKey(dp.Attributes) != "syncguard.backend=redis" {
		t.Errorf("held.duration: max %v with %s, want at least %v with the backend only", max, setKey(dp.Attributes), hold.Seconds())
	}
}
