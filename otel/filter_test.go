package otellock_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/syncguard-go/syncguard/lock"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// runOps makes every kind of Backend call through b on a fresh key, each
// with a deterministic outcome: acquire, a contended acquire, is_locked,
// both lookups, extend, release, then lock.Do (a wait with one attempt
// and a release).
func runOps(t *testing.T, ctx context.Context, b lock.Backend) {
	t.Helper()
	key := uniqueKey("filter")
	l, err := b.Acquire(ctx, key, 10*time.Second)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if _, err := b.Acquire(ctx, key, 10*time.Second); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("Acquire of a held key: %v, want ErrLocked", err)
	}
	if ok, err := b.IsLocked(ctx, key); err != nil || !ok {
		t.Fatalf("IsLocked = %v, %v; want true", ok, err)
	}
	if info, err := b.LookupKey(ctx, key); err != nil || info == nil {
		t.Fatalf("LookupKey = %v, %v; want the lease", info, err)
	}
	if info, err := b.LookupID(ctx, l.ID); err != nil || info == nil {
		t.Fatalf("LookupID = %v, %v; want the lease", info, err)
	}
	if _, err := b.Extend(ctx, l.ID, 10*time.Second); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := lock.Do(ctx, b, key, func(context.Context, lock.Lease) error { return nil }); err != nil {
		t.Fatalf("Do: %v", err)
	}
}

// spanCounts counts the ended spans of this package by name.
func spanCounts(tel *telemetry) map[string]int {
	out := map[string]int{}
	for _, s := range tel.spans.Ended() {
		if s.InstrumentationScope().Name == otellock.ScopeName {
			out[s.Name()]++
		}
	}
	return out
}

// metricCounts flattens the package's metrics: the count of each
// histogram and the value of each counter, per attribute set.
func metricCounts(t *testing.T, tel *telemetry) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for name, m := range tel.metrics(t) {
		switch m.Data.(type) {
		case metricdata.Histogram[float64]:
			for set, n := range histCounts(t, m) {
				out[name+"{"+set+"}"] = int64(n)
			}
		default:
			for set, n := range sums(t, m) {
				out[name+"{"+set+"}"] = n
			}
		}
	}
	return out
}

// TestFilter checks that a Filter skips the spans of the operations it
// rejects, and only those, while the metrics record every call as
// without a filter.
func TestFilter(t *testing.T) {
	inner, _ := newRedis(t)

	base := newTelemetry(t)
	runOps(t, testCtx(t), otellock.Wrap(inner, base.options()...))
	all := spanCounts(base)
	wantAll := map[string]int{
		"syncguard.acquire": 3, "syncguard.is_locked": 1, "syncguard.lookup_key": 1, "syncguard.lookup_id": 1, "syncguard.extend": 1,
		"syncguard.release": 2, "syncguard.wait": 1,
	}
	if !reflect.DeepEqual(all, wantAll) {
		t.Fatalf("spans without a filter: got %v, want %v", all, wantAll)
	}
	wantMetrics := metricCounts(t, base)

	without := func(names ...string) map[string]int {
		out := map[string]int{}
		for name, n := range all {
			if !slices.Contains(names, name) {
				out[name] = n
			}
		}
		return out
	}
	tests := []struct {
		desc    string
		filters []otellock.Filter
		want    map[string]int
	}{
		{
			desc: "skip is_locked and lookups",
			filters: []otellock.Filter{func(_ context.Context, op lock.OpKind) bool {
				return op != lock.OpIsLocked && op != lock.OpLookupKey && op != lock.OpLookupID
			}},
			want: without("syncguard.is_locked", "syncguard.lookup_key", "syncguard.lookup_id"),
		},
		{
			desc: "two filters: a call is traced only when both agree",
			filters: []otellock.Filter{
				func(_ context.Context, op lock.OpKind) bool { return op != lock.OpWait },
				nil, // ignored
				func(_ context.Context, op lock.OpKind) bool { return op != lock.OpExtend },
			},
			want: without("syncguard.wait", "syncguard.extend"),
		},
		{
			desc:    "skip everything",
			filters: []otellock.Filter{func(context.Context, lock.OpKind) bool { return false }},
			want:    map[string]int{},
		},
		{
			desc:    "keep everything",
			filters: []otellock.Filter{func(context.Context, lock.OpKind) bool { return true }},
			want:    all,
		},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			tel := newTelemetry(t)
			opts := tel.options()
			for _, f := range tt.filters {
				opts = append(opts, otellock.WithFilter(f))
			}
			runOps(t, testCtx(t), otellock.Wrap(inner, opts...))
			if got := spanCounts(tel); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("spans: got %v, want %v", got, tt.want)
			}
			if got := metricCounts(t, tel); !reflect.DeepEqual(got, wantMetrics) {
				t.Errorf("metrics: got %v, want %v (as without a filter)", got, wantMetrics)
			}
		})
	}
}

// TestFilterArguments checks what a Filter is given: every operation by
// its name, and the caller's context, by which it can decide too.
func TestFilterArguments(t *testing.T) {
	inner, _ := newRedis(t)
	tel := newTelemetry(t)
	type quiet struct{}
	var (
		mu   sync.Mutex
		seen = map[lock.OpKind]int{}
	)
	b := otellock.Wrap(inner, tel.options(otellock.WithFilter(func(ctx context.Context, op lock.OpKind) bool {
		mu.Lock()
		seen[op]++
		mu.Unlock()
		return ctx.Value(quiet{}) == nil
	}))...)

	ctx := testCtx(t)
	runOps(t, ctx, b)
	want := map[lock.OpKind]int{
		lock.OpAcquire: 3, lock.OpIsLocked: 1, lock.OpLookupKey: 1, lock.OpLookupID: 1,
		lock.OpExtend: 1, lock.OpRelease: 2, lock.OpWait: 1,
	}
	mu.Lock()
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("operations given to the filter: got %v, want %v", seen, want)
	}
	mu.Unlock()

	before := len(tel.spans.Ended())
	if _, err := b.IsLocked(context.WithValue(ctx, quiet{}, true), uniqueKey("quiet")); err != nil {
		t.Fatal(err)
	}
	if got := len(tel.spans.Ended()) - before; got != 0 {
		t.Errorf("spans of a call the filter rejects by its context: got %d, want 0", got)
	}
	if _, err := b.IsLocked(ctx, uniqueKey("loud")); err != nil {
		t.Fatal(err)
	}
	if got := tel.ended("syncguard.is_locked"); len(got) != 2 {
		t.Errorf("is_locked spans: got %d, want 2 (runOps and the loud call)", len(got))
	}
}

// TestFilterWait checks that filtering the wait span leaves the attempts'
// acquire spans under the caller's span.
func TestFilterWait(t *testing.T) {
	inner, _ := newRedis(t)
	tel := newTelemetry(t)
	b := otellock.Wrap(inner, tel.options(otellock.WithFilter(func(_ context.Context, op lock.OpKind) bool {
		return op != lock.OpWait
	}))...)
	ctx, parent := tel.tp.Tracer("test").Start(testCtx(t), "parent")
	err := lock.Do(ctx, b, uniqueKey("wait"), func(context.Context, lock.Lease) error { return nil })
	parent.End()
	if err != nil {
		t.Fatal(err)
	}
	acquires := tel.ended("syncguard.acquire")
	if len(acquires) != 1 {
		t.Fatalf("acquire spans: got %d, want 1", len(acquires))
	}
	if got, want := acquires[0].Parent().SpanID(), parent.SpanContext().SpanID(); got != want {
		t.Errorf("acquire span's parent: got %v, want the caller's span %v", got, want)
	}
}

// TestSpanAttributes checks that the attributes of WithSpanAttributes
// are on every span the wrapper starts, the batch span of the heartbeat
// included, and that the wrapper's own attributes win over them.
func TestSpanAttributes(t *testing.T) {
	inner, _ := newRedis(t)
	tel := newTelemetry(t)
	b := otellock.Wrap(inner, tel.options(
		otellock.WithSpanAttributes(attribute.String("deployment.environment.name", "test")),
		otellock.WithSpanAttributes(attribute.Int("tenant", 7), otellock.OutcomeKey.String("mine")),
	)...)
	ctx := testCtx(t)
	runOps(t, ctx, b)
	// Hold a lease until the heartbeat has extended it in a batch.
	err := lock.Do(ctx, b, uniqueKey("batch"), func(ctx context.Context, _ lock.Lease) error {
		for len(tel.ended("syncguard.extend_batch")) == 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
		return nil
	}, lock.WithTTL(300*time.Millisecond))
	if err != nil {
		t.Fatalf("Do: %v", err)
	}

	names := map[string]bool{}
	for _, s := range tel.spans.Ended() {
		if s.InstrumentationScope().Name != otellock.ScopeName {
			continue
		}
		names[s.Name()] = true
		a := attrs(s.Attributes())
		if a["deployment.environment.name"] != "test" || a["tenant"] != "7" {
			t.Errorf("span %s: got attributes %v, want deployment.environment.name=test and tenant=7", s.Name(), a)
		}
		if s.Name() != "syncguard.extend_batch" && a["syncguard.outcome"] == "mine" {
			t.Errorf("span %s: syncguard.outcome is the static %q, want the wrapper's", s.Name(), a["syncguard.outcome"])
		}
	}
	want := []string{"syncguard.acquire", "syncguard.release", "syncguard.extend", "syncguard.is_locked",
		"syncguard.lookup_key", "syncguard.lookup_id", "syncguard.wait", "syncguard.extend_batch"}
	for _, name := range want {
		if !names[name] {
			t.Errorf("no %s span (spans: %v)", name, fmt.Sprint(names))
		}
	}
}
