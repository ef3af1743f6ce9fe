// Otel shows what a locked request looks like in a tracing backend. An
// HTTP handler pays for order 42 under lock.Do on a backend wrapped by
// otellock, while a settlement job already holds the order's lock, so the
// request has to wait. Its trace, as Jaeger or Tempo would show it:
//
//	POST /orders/{id}/pay            (otelhttp)
//	├─ syncguard.wait                (the whole wait; an event per attempt)
//	│  ├─ syncguard.acquire          (outcome=locked)
//	│  │  └─ evalsha                 (redisotel)
//	│  └─ syncguard.acquire          (outcome=acquired, fence)
//	│     └─ evalsha
//	└─ syncguard.release
//	   └─ evalsha
//
// When the request's attempt found the lock busy, it queued, and the job's
// release usually hands the lock over: then the last acquire span has no
// evalsha of its own and says handoff=true, with the fence.
//
// Then POST /invoices/43 enqueues an asynq task with asynqlock.Enqueue,
// and an asynq server runs it through an asynqlock.Guard on the same
// backend: the task's delivery (a CONSUMER span), its lock spans and its
// work are printed in the request's trace (see invoiceJob).
//
// The spans go to stdout as pretty-printed JSON (stdouttrace), or over
// OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set (for example
// http://localhost:4318 for a local Jaeger or an OpenTelemetry Collector).
// At the end the request's trace is printed as a compact tree.
//
//	go run ./examples/otel
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 go run ./examples/otel
//
// It runs on an embedded Redis (miniredis) unless REDIS_URL is set; keys go
// under a random prefix.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// hold is how long the settlement job keeps the order locked.
const hold = 150 * time.Millisecond

// treeOnly skips the stdout exporter and prints only the span tree (make
// demo uses it); OTLP export is unaffected.
var treeOnly = flag.Bool("tree", false, "print only the request's span tree, not the exported spans")

func main() {
	flag.Parse()
	demorun.Main("otel example", demo)
}

// demo sends the request and prints its span tree.
func demo(ctx context.Context, env *demorun.Env) error {
	_, err := tracedRequest(ctx, env)
	return err
}

// tracedRequest sets up tracing from the environment and on env's Redis
// client, sends the request, and prints its span tree, which it also
// returns.
func tracedRequest(ctx context.Context, env *demorun.Env) (*node, error) {
	w := env.Out
	tp, spans, err := newTracerProvider(ctx, w)
	if err != nil {
		return nil, err
	}
	defer tp.Shutdown(context.Background())

	// db.statement would record the scripts' arguments: raw keys and lock ids.
	if err := redisotel.InstrumentTracing(env.Redis, redisotel.WithTracerProvider(tp), redisotel.WithDBStatement(false)); err != nil {
		return nil, err
	}
	inner, err := env.Backend("otel-example")
	if err != nil {
		return nil, err
	}
	backend := otellock.Wrap(inner, otellock.WithTracerProvider(tp))

	request, err := payWhileJobHolds(ctx, tp, backend)
	if err != nil {
		return nil, err
	}
	// asynq on a client of its own: its polling is no one's trace.
	rdb := redis.NewClient(env.Redis.Options())
	defer rdb.Close()
	job, err := invoiceJob(ctx, rdb, tp, backend)
	if err != nil {
		return nil, err
	}
	// Export everything (stdout JSON or OTLP) before printing the tree.
	if err := tp.Shutdown(ctx); err != nil {
		return nil, fmt.Errorf("exporting spans: %w", err)
	}
	root := buildTree(spans.Ended(), request)
	if root == nil {
		return nil, errors.New("the request's span was not recorded")
	}
	fmt.Fprintf(w, "\nThe request's trace (%s):\n", request.TraceID())
	root.print(w)
	jobRoot := buildTree(spans.Ended(), job)
	if jobRoot == nil {
		return nil, errors.New("the invoice request's span was not recorded")
	}
	fmt.Fprintf(w, "\nAn invoice request that enqueued a task, with the task's run (%s):\n", job.TraceID())
	jobRoot.print(w)
	return root, nil
}

// payWhileJobHolds starts a settlement job that holds order 42's lock for
// a while, then sends POST /orders/42/pay, which waits for it. It returns
// the request's span context.
func payWhileJobHolds(ctx context.Context, tp trace.TracerProvider, backend lock.Backend) (trace.SpanContext, error) {
	mux := http.NewServeMux()
	var request trace.SpanContext
	mux.HandleFunc("POST /orders/{id}/pay", func(w http.ResponseWriter, r *http.Request) {
		request = trace.SpanContextFromContext(r.Context())
		err := lock.Do(r.Context(), backend, "order:"+r.PathValue("id"), func(ctx context.Context, l lock.Lease) error {
			fmt.Fprintf(w, "paid (fence %s)\n", l.Fence) // a real handler writes with l.Fence
			return nil
		}, lock.WithTTL(5*time.Second), lock.WithRetry(lock.Retry{BaseDelay: 40 * time.Millisecond}), lock.WithWait(3*time.Second))
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
		}
	})
	srv := httptest.NewServer(otelhttp.NewHandler(mux, "orders", otelhttp.WithTracerProvider(tp)))
	// Close waits for the handler, and so for the request span to end.
	defer srv.Close()

	// The contending caller: another instance's job, in a trace of its own.
	held := make(chan struct{})
	jobDone := make(chan error, 1)
	go func() {
		jctx, span := tp.Tracer("example").Start(ctx, "settlement job")
		defer span.End()
		jobDone <- lock.Do(jctx, backend, "order:42", func(ctx context.Context, _ lock.Lease) error {
			close(held)
			time.Sleep(hold)
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-jobDone:
		return request, fmt.Errorf("settlement job: %w", err)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/orders/42/pay", nil)
	if err != nil {
		return request, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return request, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return request, fmt.Errorf("POST /orders/42/pay: %s: %s", resp.Status, body)
	}
	if err := <-jobDone; err != nil {
		return request, fmt.Errorf("settlement job: %w", err)
	}
	return request, nil
}

// newTracerProvider returns an SDK exporting to stdout, or over OTLP/HTTP
// when the standard OTEL_EXPORTER_OTLP_ENDPOINT is set, with a recorder
// beside the exporter for the tree printed at the end. Its resource
// honours OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func newTracerProvider(ctx context.Context, w io.Writer) (*sdktrace.TracerProvider, *tracetest.SpanRecorder, error) {
	var exp sdktrace.SpanExporter
	var err error
	if ep := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); ep != "" {
		exp, err = otlptracehttp.New(ctx) // reads the OTEL_EXPORTER_OTLP_* variables
		fmt.Fprintf(w, "Traces: OTLP/HTTP to %s\n", ep)
	} else if !*treeOnly {
		exp, err = stdouttrace.New(stdouttrace.WithWriter(w), stdouttrace.WithPrettyPrint())
		fmt.Fprintln(w, "Traces: stdout (set OTEL_EXPORTER_OTLP_ENDPOINT to send them over OTLP/HTTP)")
	}
	if err != nil {
		return nil, nil, err
	}
	// The service is "orders" unless the standard OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES say otherwise.
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", "orders")), resource.WithFromEnv())
	if err != nil {
		return nil, nil, err
	}
	spans := tracetest.NewSpanRecorder()
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(spans),
	}
	if exp != nil {
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	return sdktrace.NewTracerProvider(opts...), spans, nil
}
