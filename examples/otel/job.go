package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
)

// invoiceJob sends POST /invoices/43, whose handler enqueues an
// "invoice:send" task with asynqlock.Enqueue; an asynq server runs it
// through an asynqlock.Guard on backend. The task's delivery, its lock
// spans and the handler's work land in the request's trace:
//
//	POST /invoices/{id}
//	└─ send <queue>                  (PRODUCER: asynqlock.Enqueue)
//	   └─ process <queue>            (CONSUMER: the Guard; task.outcome=ran, fence)
//	      ├─ syncguard.wait
//	      │  └─ syncguard.acquire
//	      ├─ send invoice email      (the handler's own span)
//	      └─ syncguard.release
//
// It returns the request's span context once the task has run.
func invoiceJob(ctx context.Context, rdb *redis.Client, tp trace.TracerProvider, backend lock.Backend) (trace.SpanContext, error) {
	// The trace context travels in the task's headers, written and read
	// with the global propagator.
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	var request trace.SpanContext
	client := asynq.NewClientFromRedisClient(rdb)
	defer client.Close()
	queue, sent, stop, err := invoiceWorker(rdb, tp, backend)
	if err != nil {
		return request, err
	}
	// stop waits for the handler, and so for the delivery's span to end.
	defer stop()

	api := http.NewServeMux()
	api.HandleFunc("POST /invoices/{id}", func(w http.ResponseWriter, r *http.Request) {
		request = trace.SpanContextFromContext(r.Context())
		info, err := asynqlock.Enqueue(r.Context(), client, asynq.NewTask("invoice:send", []byte(r.PathValue("id"))),
			asynqlock.WithTracerProvider(tp), asynqlock.TaskOptions(asynq.Queue(queue)))
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, "enqueued %s\n", info.ID)
	})
	hs := httptest.NewServer(otelhttp.NewHandler(api, "invoices", otelhttp.WithTracerProvider(tp)))
	defer hs.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, hs.URL+"/invoices/43", nil)
	if err != nil {
		return request, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return request, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return request, fmt.Errorf("POST /invoices/43: %s", resp.Status)
	}
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		return request, fmt.Errorf("the invoice task did not run within 10s")
	case <-ctx.Done():
		return request, ctx.Err()
	}
	return request, nil
}

// invoiceWorker starts an asynq server on a queue of its own, running
// "invoice:send" tasks through an asynqlock.Guard on backend; sent is
// closed once a task has run. stop shuts the server down and deletes the
// queue.
func invoiceWorker(rdb *redis.Client, tp trace.TracerProvider, backend lock.Backend) (queue string, sent <-chan struct{}, stop func(), err error) {
	guard, err := asynqlock.New(backend, asynqlock.WithTTL(5*time.Second), asynqlock.WithTracerProvider(tp))
	if err != nil {
		return "", nil, nil, err
	}
	var rnd [6]byte
	rand.Read(rnd[:]) // never fails (Go 1.24+)
	queue = "otel-example-" + hex.EncodeToString(rnd[:])
	done := make(chan struct{})
	var once sync.Once
	jobs := asynq.NewServeMux()
	jobs.Use(guard.Middleware())
	jobs.HandleFunc("invoice:send", func(ctx context.Context, t *asynq.Task) error {
		_, span := tp.Tracer("example").Start(ctx, "send invoice email")
		time.Sleep(20 * time.Millisecond)
		span.End()
		once.Do(func() { close(done) })
		return nil
	})
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Queues:            map[string]int{queue: 1},
		IsFailure:         asynqlock.IsFailure,
		TaskCheckInterval: 50 * time.Millisecond,
		LogLevel:          asynq.WarnLevel,
	})
	if err := srv.Start(jobs); err != nil {
		return "", nil, nil, err
	}
	return queue, done, func() {
		srv.Shutdown()
		insp := asynq.NewInspectorFromRedisClient(rdb)
		_ = insp.DeleteQueue(queue, true)
		insp.Close()
	}, nil
}
