package asynqlock_test

import (
	"context"
	"time"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// docs/opentelemetry.md's asynq snippet, kept compiling (testkit/readme
// checks the quote); nothing calls it.
func docsAsynqTracing(ctx context.Context, tp trace.TracerProvider, client *asynq.Client, backend lock.Backend,
	mux *asynq.ServeMux, payload []byte) error {
	// README: asynq tracing
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))

	// The producer, in a request handler: ctx carries the request's span.
	_, err := asynqlock.Enqueue(ctx, client, asynq.NewTask("invoice:send", payload),
		asynqlock.TaskOptions(asynq.Queue("invoices")))
	if err != nil {
		return err
	}

	// The worker: each delivery a span, the lock's spans under it.
	guard, err := asynqlock.New(otellock.Wrap(backend), asynqlock.WithDoneTTL(10*time.Minute))
	if err != nil {
		return err
	}
	mux.Use(guard.Middleware())
	// END README
	return nil
}

var _ = docsAsynqTracing
