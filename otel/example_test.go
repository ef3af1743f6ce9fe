package otellock_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/syncguard-go/syncguard/lock"
	otellock "github.com/syncguard-go/syncguard/otel"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// Wrap the backend once; lock.Do on it shows as a wait span holding the
// attempts, then the release, under the caller's span.
func ExampleWrap() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	// In a service: an SDK TracerProvider with an exporter, often global.
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	inner, err := redisbackend.New(rdb, nil)
	if err != nil {
		panic(err)
	}
	b := otellock.Wrap(inner, otellock.WithTracerProvider(tp))

	ctx, span := tp.Tracer("example").Start(context.Background(), "charge invoice 42")
	err = lock.Do(ctx, b, "invoice:42", func(ctx context.Context, l lock.Lease) error {
		return nil // the work, with l.Fence for fenced writes
	})
	span.End()
	if err != nil {
		panic(err)
	}

	// Print the span tree.
	children := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		children[s.Parent().SpanID().String()] = append(children[s.Parent().SpanID().String()], s)
	}
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		for _, s := range children[parent] {
			var outcome string
			for _, kv := range s.Attributes() {
				if kv.Key == otellock.OutcomeKey {
					outcome = " (" + kv.Value.AsString() + ")"
				}
			}
			fmt.Println(strings.Repeat("  ", depth) + s.Name() + outcome)
			walk(s.SpanContext().SpanID().String(), depth+1)
		}
	}
	walk("0000000000000000", 0)
	// Output:
	// charge invoice 42
	//   syncguard.wait (acquired)
	//     syncguard.acquire (acquired)
	//   syncguard.release (released)
}

// Skip the spans of status checks (is_locked and lookups), which a
// dashboard or a health check may poll often; their durations and
// outcomes still go into the metrics.
func ExampleWithFilter() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))

	inner, err := redisbackend.New(rdb, nil)
	if err != nil {
		panic(err)
	}
	b := otellock.Wrap(inner, otellock.WithTracerProvider(tp),
		otellock.WithFilter(func(_ context.Context, op lock.OpKind) bool {
			return op != lock.OpIsLocked && op != lock.OpLookupKey && op != lock.OpLookupID
		}))

	ctx := context.Background()
	if _, err := b.IsLocked(ctx, "invoice:42"); err != nil {
		panic(err)
	}
	err = lock.Do(ctx, b, "invoice:42", func(ctx context.Context, l lock.Lease) error {
		_, err := b.LookupKey(ctx, "invoice:42")
		return err
	})
	if err != nil {
		panic(err)
	}

	for _, s := range spans.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// syncguard.acquire
	// syncguard.wait
	// syncguard.release
}

// A concurrency limit through the wrapper: every slot's acquire span says
// it was a slot and of which limit, and an attempt over the limit is an
// outcome (locked), not an error.
func ExampleWrap_limit() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	inner, err := redisbackend.New(rdb, nil)
	if err != nil {
		panic(err)
	}
	b := otellock.Wrap(inner, otellock.WithTracerProvider(tp))

	ctx := context.Background()
	for range 3 { // at most 2 exports per user: the third is refused
		_, err := lock.Acquire(ctx, b, "export:user-7", lock.WithLimit(2), lock.WithWait(0))
		fmt.Println("slot:", err == nil)
	}
	for _, s := range spans.Ended() {
		if s.Name() != "syncguard.acquire" {
			continue
		}
		a := attribute.NewSet(s.Attributes()...)
		slot, _ := a.Value(otellock.SlotKey)
		limit, _ := a.Value(otellock.LimitKey)
		outcome, _ := a.Value(otellock.OutcomeKey)
		fmt.Println(s.Name(), "slot:", slot.AsBool(), "limit:", limit.AsInt64(), "outcome:", outcome.AsString())
	}
	// Output:
	// slot: true
	// slot: true
	// slot: false
	// syncguard.acquire slot: true limit: 2 outcome: acquired
	// syncguard.acquire slot: true limit: 2 outcome: acquired
	// syncguard.acquire slot: true limit: 2 outcome: locked
}

// Install the OpenTelemetry hook with lock.WithHooks beside a hook of your
// own; the first hook is the outermost, so the spans cover the time the
// next hooks take.
func ExampleNewHook() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	inner, err := redisbackend.New(rdb, nil)
	if err != nil {
		panic(err)
	}

	// A hook of your own: here, one that lists the operations.
	ops := &kindList{}
	b := lock.WithHooks(inner, otellock.NewHook(inner.Capabilities().Backend, otellock.WithTracerProvider(tp)), ops)

	err = lock.Do(context.Background(), b, "invoice:42", func(ctx context.Context, l lock.Lease) error {
		return nil
	})
	if err != nil {
		panic(err)
	}
	for _, s := range spans.Ended() {
		fmt.Println(s.Name())
	}
	fmt.Println(strings.Join(ops.kinds, ", "))
	// Output:
	// syncguard.acquire
	// syncguard.wait
	// syncguard.release
	// acquire, wait, release
}

// kindList is a lock.Hook that lists the kinds of the operations it sees.
type kindList struct{ kinds []string }

func (l *kindList) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		err := next(ctx, op)
		l.kinds = append(l.kinds, op.Kind.String())
		return err
	}
}
