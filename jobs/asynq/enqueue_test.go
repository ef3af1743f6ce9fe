package asynqlock_test

import (
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
)

// TestEnqueueRefusesNil: a nil client or task is an InvalidArgument.
func TestEnqueueRefusesNil(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tt := range []struct {
		desc string
		c    *asynq.Client
		task *asynq.Task
	}{
		{"nil client", nil, asynq.NewTask(taskType, nil)},
		{"nil task", e.client, nil},
	} {
		info, err := asynqlock.Enqueue(bg(t), tt.c, tt.task)
		if info != nil || lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("%s: Enqueue = %v, %v; want nil and an InvalidArgument error", tt.desc, info, err)
		}
	}
}

// TestEnqueueCarriesContext: the enqueued task carries the PRODUCER
// span's context in its headers, beside its own headers, replacing a
// stale traceparent, with the options it was built with and those given;
// the caller's task is unchanged. Without a TracerProvider there is no
// producer span, and the caller's own span context is carried.
func TestEnqueueCarriesContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tr := newTracer(t)
	const stale = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	own := map[string]string{"x-tenant": "acme", "traceparent": stale}
	newTask := func() *asynq.Task {
		return asynq.NewTaskWithHeaders(taskType, []byte("p"), own, asynq.Queue(e.queue), asynq.MaxRetry(7))
	}
	ctx, root := tr.tp.Tracer("test").Start(bg(t), "POST /invoices")
	defer root.End()

	t.Run("traced", func(t *testing.T) {
		task := newTask()
		info, err := asynqlock.Enqueue(ctx, e.client, task, asynqlock.WithTracerProvider(tr.tp),
			asynqlock.TaskOptions(asynq.ProcessIn(time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		producers := ofKind(tr.ended(), trace.SpanKindProducer)
		if len(producers) != 1 {
			t.Fatalf("producer spans: %d, want 1", len(producers))
		}
		p := producers[0]
		want := "00-" + p.SpanContext().TraceID().String() + "-" + p.SpanContext().SpanID().String() + "-01"
		checkEnqueued(t, e, info, want)
		if p.Parent().SpanID() != root.SpanContext().SpanID() || p.Name() != "send "+e.queue ||
			attrString(p, "messaging.message.id") != info.ID || p.Status().Code == codes.Error {
			t.Errorf("producer span %q under %v, attributes %v, status %v", p.Name(), p.Parent().SpanID(), p.Attributes(), p.Status())
		}
		if task.Headers()["traceparent"] != stale || len(task.Headers()) != 2 {
			t.Errorf("the caller's task changed: %v", task.Headers())
		}
	})
	t.Run("untraced", func(t *testing.T) {
		before := len(tr.ended())
		info, err := asynqlock.Enqueue(ctx, e.client, newTask(), asynqlock.TaskOptions(asynq.ProcessIn(time.Hour)))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(tr.ended()); n != before {
			t.Errorf("%d spans recorded without a TracerProvider", n-before)
		}
		checkEnqueued(t, e, info, "00-"+root.SpanContext().TraceID().String()+"-"+root.SpanContext().SpanID().String()+"-01")
	})
	t.Run("failed", func(t *testing.T) {
		before := len(tr.ended())
		_, err := asynqlock.Enqueue(ctx, e.client, newTask(), asynqlock.WithTracerProvider(tr.tp),
			asynqlock.TaskOptions(asynq.Group("")))
		if err == nil {
			t.Fatal("Enqueue with an empty group succeeded")
		}
		spans := tr.ended()[before:]
		if len(spans) != 1 || spans[0].Status().Code != codes.Error {
			t.Errorf("spans of a failed enqueue: %v; want one with the Error status", spans)
		}
	})
}

// checkEnqueued checks the task of info as stored: its headers, queue and
// options.
func checkEnqueued(t *testing.T, e *env, info *asynq.TaskInfo, traceparent string) {
	t.Helper()
	got, err := e.insp.GetTaskInfo(e.queue, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Headers["traceparent"] != traceparent || got.Headers["x-tenant"] != "acme" {
		t.Errorf("headers %v, want traceparent %s and x-tenant", got.Headers, traceparent)
	}
	if got.MaxRetry != 7 || got.State != asynq.TaskStateScheduled {
		t.Errorf("max retry %d, state %v: the task's own options or the enqueue's were lost", got.MaxRetry, got.State)
	}
}
