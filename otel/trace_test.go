package otellock_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
	otellock "github.com/syncguard-go/syncguard/otel"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestTraceParentChild sends one request through otelhttp and the lock
// middleware to a handler, with the wrapped backend on a go-redis client
// instrumented by redisotel: all spans form one trace, request span ->
// lock spans -> Redis EVALSHA spans.
func TestTraceParentChild(t *testing.T) {
	tel := newTelemetry(t)
	client := redistest.Shared(t).Client(t)
	// db.statement would carry the command's arguments: the raw key and
	// the lock id.
	if err := redisotel.InstrumentTracing(client, redisotel.WithTracerProvider(tel.tp),
		redisotel.WithDBStatement(false)); err != nil {
		t.Fatal(err)
	}
	inner, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	b := otellock.Wrap(inner, tel.options()...)
	key := uniqueKey("order")
	// Load the scripts first, so that every call below is one EVALSHA.
	if ok, err := b.IsLocked(testCtx(t), key); err != nil || ok {
		t.Fatalf("IsLocked = %v, %v", ok, err)
	}
	if _, err := b.LookupID(testCtx(t), lockdriver.NewLockID()); err != nil {
		t.Fatal(err)
	}
	l, err := b.Acquire(testCtx(t), key, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(testCtx(t), l.ID); err != nil {
		t.Fatal(err)
	}
	tel.spans.Reset()

	mw, err := httplock.New(b, httplock.FromHeader("Idempotency-Key"))
	if err != nil {
		t.Fatal(err)
	}
	var fence lock.Fence
	app := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l, _ := lock.LeaseFrom(r.Context())
		fence = l.Fence
		w.WriteHeader(http.StatusCreated)
	}))
	h := otelhttp.NewHandler(app, "POST /orders", otelhttp.WithTracerProvider(tel.tp),
		otelhttp.WithSpanNameFormatter(func(op string, _ *http.Request) string { return op }))
	req := httptest.NewRequest(http.MethodPost, "/orders", nil)
	req.Header.Set("Idempotency-Key", key)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated || fence == "" {
		t.Fatalf("response %d, fence %q; want 201 from the handler with a lease", rec.Code, fence)
	}

	spans := tel.spans.Ended()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	var request sdktrace.ReadOnlySpan
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
		if s.Name() == "POST /orders" {
			request = s
		}
	}
	if request == nil {
		t.Fatalf("no request span among %s", names(spans))
	}
	for _, s := range spans {
		if s.SpanContext().TraceID() != request.SpanContext().TraceID() {
			t.Errorf("span %s is in trace %v, want the request's %v", s.Name(), s.SpanContext().TraceID(), request.SpanContext().TraceID())
		}
	}
	parentName := func(s sdktrace.ReadOnlySpan) string {
		if p, ok := byID[s.Parent().SpanID()]; ok {
			return p.Name()
		}
		return "<none>"
	}
	// The chains each lock span must sit in, from the request down.
	want := map[string]string{
		"syncguard.wait":    "POST /orders",
		"syncguard.acquire": "syncguard.wait",
		"syncguard.release": "POST /orders",
	}
	seen := map[string]int{}
	for _, s := range spans {
		name := s.Name()
		if p, ok := want[name]; ok {
			seen[name]++
			if got := parentName(s); got != p {
				t.Errorf("%s: parent %s, want %s", name, got, p)
			}
		}
		if strings.HasPrefix(name, "eval") {
			seen[name+" under "+parentName(s)]++
		}
	}
	for name := range want {
		if seen[name] != 1 {
			t.Errorf("%s spans: got %d, want 1 (spans: %s)", name, seen[name], names(spans))
		}
	}
	for _, p := range []string{"syncguard.acquire", "syncguard.release"} {
		if got := seen["evalsha under "+p]; got != 1 {
			t.Errorf("evalsha spans under %s: got %d, want 1 (seen: %v)", p, got, seen)
		}
	}
	if len(seen) != len(want)+2 {
		t.Errorf("spans: got %v, want the lock spans and one evalsha under each of acquire and release", seen)
	}
	for _, s := range spans {
		for _, kv := range s.Attributes() {
			if strings.Contains(kv.Value.String(), key) {
				t.Errorf("span %s attribute %s carries the raw key", s.Name(), kv.Key)
			}
		}
	}
}

func names(spans []sdktrace.ReadOnlySpan) string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return strings.Join(out, ", ")
}
