package otellock_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain stops the package's shared redis-server after the tests.
func TestMain(m *testing.M) { redistest.Main(m) }

// telemetry is an SDK that keeps everything in memory.
type telemetry struct {
	tp     *sdktrace.TracerProvider
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t testing.TB) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

// options wires the wrapper to the in-memory SDK.
func (tel *telemetry) options(extra ...otellock.Option) []otellock.Option {
	return append([]otellock.Option{
		otellock.WithTracerProvider(tel.tp), otellock.WithMeterProvider(tel.mp),
	}, extra...)
}

// ended returns the ended spans named name, in the order they ended.
func (tel *telemetry) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// last returns the span that ended last, or fails the test.
func (tel *telemetry) last(t *testing.T) sdktrace.ReadOnlySpan {
	t.Helper()
	all := tel.spans.Ended()
	if len(all) == 0 {
		t.Fatal("no span ended")
	}
	return all[len(all)-1]
}

// metrics collects the metrics recorded so far, by name.
func (tel *telemetry) metrics(t *testing.T) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otellock.ScopeName {
			continue
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// attrs returns kvs as a map, values formatted with Value.String.
func attrs(kvs []attribute.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// setKey is an attribute set formatted as sorted k=v pairs, for map keys.
func setKey(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	return strings.Join(parts, ",")
}

// histCounts returns the histogram's counts per attribute set.
func histCounts(t *testing.T, m metricdata.Metrics) map[string]uint64 {
	t.Helper()
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is a %T, want a float64 histogram", m.Name, m.Data)
	}
	out := map[string]uint64{}
	for _, dp := range h.DataPoints {
		out[setKey(dp.Attributes)] += dp.Count
	}
	return out
}

// sums returns the counter's sums per attribute set.
func sums(t *testing.T, m metricdata.Metrics) map[string]int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is a %T, want an int64 sum", m.Name, m.Data)
	}
	out := map[string]int64{}
	for _, dp := range s.DataPoints {
		out[setKey(dp.Attributes)] += dp.Value
	}
	return out
}

// newRedis returns a redisbackend on the shared server, under a prefix of
// the test's own, and its client.
func newRedis(t testing.TB) (*redisbackend.Backend, *redis.Client) {
	t.Helper()
	return newRedisWith(t, redisbackend.Options{})
}

// newPollingRedis is newRedis without release notifications, for tests
// of the wait span's polling schedule.
func newPollingRedis(t testing.TB) (*redisbackend.Backend, *redis.Client) {
	t.Helper()
	return newRedisWith(t, redisbackend.Options{DisableNotifications: true})
}

func newRedisWith(t testing.TB, o redisbackend.Options) (*redisbackend.Backend, *redis.Client) {
	t.Helper()
	client := redistest.Shared(t).Client(t)
	o.Prefix = redistest.Prefix(t)
	b, err := redisbackend.New(client, &o)
	if err != nil {
		t.Fatalf("redisbackend.New: %v", err)
	}
	return b, client
}

// uniqueKey returns a key no other test uses.
func uniqueKey(label string) string {
	return fmt.Sprintf("%s:%s", label, lockdriver.NewLockID()[:8])
}

// testCtx is bounded, and cancelled when the test ends.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
