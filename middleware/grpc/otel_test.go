package grpclock_test

import (
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	grpclock "github.com/syncguard-go/syncguard/middleware/grpc"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// TestSpansUnderRPC: with otelgrpc's server handler and an otellock
// backend, every lock span is in the RPC's trace, under its server span.
func TestSpansUnderRPC(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	ic, err := grpclock.UnaryServerInterceptor(otellock.Wrap(e.b, otellock.WithTracerProvider(tp)),
		grpclock.FromIdempotencyKey(), grpclock.WithScope(user), grpclock.WithReplay(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	conn := serve(t, &orders{}, false, []grpc.ServerOption{grpc.UnaryInterceptor(ic),
		grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(tp)))})
	for range 2 { // a run, then a replay
		if r := call(testCtx(t), conn, "pencils", "idempotency-key", "k1", "x-user-bin", "ann"); r.err != nil {
			t.Fatal(r.err)
		}
	}
	// A server span ends after its response went out: the client can
	// have it first.
	deadline := time.Now().Add(5 * time.Second)
	for serverSpans(spans.Ended()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := serverSpans(spans.Ended()); n != 2 {
		t.Fatalf("%d server spans, want 2", n)
	}
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byID[s.SpanContext().SpanID()] = s
	}
	names := map[string]bool{}
	for _, s := range spans.Ended() {
		if s.SpanKind() == trace.SpanKindServer {
			continue
		}
		names[s.Name()] = true
		root := s
		for root.Parent().IsValid() {
			p, ok := byID[root.Parent().SpanID()]
			if !ok {
				break
			}
			root = p
		}
		if root.SpanKind() != trace.SpanKindServer || root.Name() != "test.Orders/Create" {
			t.Errorf("span %s is under %q (%v), want the RPC's server span", s.Name(), root.Name(), root.SpanKind())
		}
	}
	// The run: an acquire that took the lock, then the release storing
	// the record; the replay: an acquire that found the record.
	for _, want := range []string{"syncguard.acquire", "syncguard.release_record"} {
		if !names[want] {
			t.Errorf("no %s span among %v", want, names)
		}
	}
	var outcomes []string
	for _, s := range spans.Ended() {
		if s.Name() != "syncguard.acquire" {
			continue
		}
		for _, a := range s.Attributes() {
			if a.Key == otellock.OutcomeKey {
				outcomes = append(outcomes, a.Value.AsString())
			}
		}
	}
	if want := []string{otellock.OutcomeAcquired, otellock.OutcomeFound}; !slices.Equal(outcomes, want) {
		t.Errorf("acquire spans' outcomes = %v, want %v", outcomes, want)
	}
}

// serverSpans counts the spans of kind SERVER among ended.
func serverSpans(ended []sdktrace.ReadOnlySpan) int {
	n := 0
	for _, s := range ended {
		if s.SpanKind() == trace.SpanKindServer {
			n++
		}
	}
	return n
}
