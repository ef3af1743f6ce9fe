package otellock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestRawKeys exercises every path that records something (each
// operation, contention, a wait, a failure, a lost lease) with a
// distinctive key, then searches all recorded spans and metrics for the
// raw key and the raw lock ids. The key appears only with WithRawKeys; a
// lock id never does.
func TestRawKeys(t *testing.T) {
	tests := []struct {
		desc    string
		opts    []otellock.Option
		wantKey bool
	}{
		{desc: "default", wantKey: false},
		{desc: "WithRawKeys", opts: []otellock.Option{otellock.WithRawKeys()}, wantKey: true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			tel := newTelemetry(t)
			key := "zq7-Secret-Customer-" + lockdriver.NewLockID()[:6]
			ids := exercise(t, tel, key, tt.opts...)
			spans, metrics := dump(t, tel)

			if !strings.Contains(spans, lockdriver.HashKey(key)) {
				t.Fatalf("the key's hash is not in the recorded spans: the search below proves nothing\n%s", spans)
			}
			if got := strings.Contains(spans, key); got != tt.wantKey {
				t.Errorf("raw key in the spans: got %v, want %v\n%s", got, tt.wantKey, spans)
			}
			if strings.Contains(metrics, key) || strings.Contains(metrics, lockdriver.HashKey(key)) {
				t.Errorf("metric attributes carry the key or its hash:\n%s", metrics)
			}
			for _, id := range ids {
				if strings.Contains(spans, id) || strings.Contains(metrics, id) {
					t.Errorf("raw lock id %s recorded", id)
				}
			}
		})
	}
}

// exercise runs every recorded path on key and returns the lock ids it
// was granted.
func exercise(t *testing.T, tel *telemetry, key string, opts ...otellock.Option) (ids []string) {
	t.Helper()
	inner, client := newRedis(t)
	b := otellock.Wrap(inner, tel.options(opts...)...)
	ctx, root := tel.tp.Tracer("test").Start(testCtx(t), "root")
	defer root.End()

	l, err := b.Acquire(ctx, key, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, l.ID)
	_, _ = b.Acquire(ctx, key, time.Second) // contention
	_, _ = b.IsLocked(ctx, key)
	_, _ = b.LookupKey(ctx, key)
	_, _ = b.LookupID(ctx, l.ID)
	_, _ = b.Extend(ctx, l.ID, 10*time.Second)
	// A wait that gives up, then one that succeeds after the release.
	_ = lock.Do(ctx, b, key, func(context.Context, lock.Lease) error { return nil },
		lock.WithRetry(lock.Retry{MaxRetries: 1, BaseDelay: time.Millisecond}))
	go func() {
		time.Sleep(30 * time.Millisecond)
		_ = b.Release(context.Background(), l.ID)
	}()
	err = lock.Do(ctx, b, key, func(ctx context.Context, l2 lock.Lease) error {
		ids = append(ids, l2.ID)
		return nil
	}, lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Millisecond}))
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	_ = b.Release(ctx, l.ID) // not held any more
	// A failure.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, _ = b.Acquire(cancelled, key, time.Second)
	_ = lock.Do(cancelled, b, key, func(context.Context, lock.Lease) error { return nil })
	// A lost lease.
	err = lock.Do(ctx, b, key, func(ctx context.Context, l3 lock.Lease) error {
		ids = append(ids, l3.ID)
		if err := client.Del(ctx, inner.Prefix()+":"+key).Err(); err != nil {
			return err
		}
		<-ctx.Done()
		return nil
	}, lock.WithTTL(300*time.Millisecond))
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("Do with a deleted lock key: %v, want ErrLeaseLost", err)
	}
	// A concurrency limit (its key contains key): a slot, a lookup,
	// contention, and a slot handed over by a release.
	lk := key + ":limit"
	s1, err := lock.Acquire(ctx, b, lk, lock.WithLimit(1), lock.WithTTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, s1.ID)
	_, _ = b.(lock.IDBackend).LookupLimit(ctx, lk)
	_, _ = lock.Acquire(ctx, b, lk, lock.WithLimit(1), lock.WithWait(0))
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = b.Release(context.Background(), s1.ID)
	}()
	s2, err := lock.Acquire(ctx, b, lk, lock.WithLimit(1), lock.WithRetry(lock.Retry{BaseDelay: 2 * time.Second}), lock.WithWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, s2.ID)
	_ = b.Release(ctx, s2.ID)
	return ids
}

// dump renders everything recorded: every span's name, attributes,
// events, links and status, and every metric's name and data points'
// attributes (exemplars included).
func dump(t *testing.T, tel *telemetry) (spans, metrics string) {
	t.Helper()
	var sb strings.Builder
	kvs := func(kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			fmt.Fprintf(&sb, " %s=%s", kv.Key, kv.Value.String())
		}
	}
	for _, s := range tel.spans.Ended() {
		fmt.Fprintf(&sb, "span %s status=%v %q", s.Name(), s.Status().Code, s.Status().Description)
		kvs(s.Attributes())
		sb.WriteString("\n")
		for _, e := range s.Events() {
			fmt.Fprintf(&sb, "  event %s", e.Name)
			kvs(e.Attributes)
			sb.WriteString("\n")
		}
		for _, l := range s.Links() {
			sb.WriteString("  link")
			kvs(l.Attributes)
			sb.WriteString("\n")
		}
	}
	spans = sb.String()

	sb.Reset()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			fmt.Fprintf(&sb, "metric %s %s\n", m.Name, m.Description)
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					kvs(dp.Attributes.ToSlice())
					for _, ex := range dp.Exemplars {
						kvs(ex.FilteredAttributes)
					}
					sb.WriteString("\n")
				}
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					kvs(dp.Attributes.ToSlice())
					for _, ex := range dp.Exemplars {
						kvs(ex.FilteredAttributes)
					}
					sb.WriteString("\n")
				}
			default:
				t.Fatalf("unexpected metric data %T", m.Data)
			}
		}
	}
	return spans, sb.String()
}
