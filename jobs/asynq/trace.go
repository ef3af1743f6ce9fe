package asynqlock

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// ScopeName is the instrumentation scope of the spans this package
// records: its import path.
const ScopeName = "github.com/syncguard-go/syncguard/jobs/asynq"

// Attribute keys of the spans this package records, beside the
// OpenTelemetry messaging conventions' (messaging.system "asynq",
// messaging.operation.type and .name, messaging.destination.name: the
// queue, messaging.message.id: the task id).
const (
	// TaskTypeKey is the task's type.
	TaskTypeKey = attribute.Key("messaging.asynq.task.type")
	// RetryCountKey is how many times asynq has retried the task
	// (delivery spans).
	RetryCountKey = attribute.Key("messaging.asynq.task.retry_count")
	// TaskOutcomeKey is what became of a delivery; see the TaskOutcome
	// constants (delivery spans).
	TaskOutcomeKey = attribute.Key("syncguard.task.outcome")
	// DroppedKey is true when the Guard removed a task that did not run,
	// false when asynq retries it (delivery spans of duplicates and limited
	// tasks).
	DroppedKey = attribute.Key("syncguard.task.dropped")
	// FenceKey is the fence of the lease the task ran under (delivery
	// spans of tasks that ran).
	FenceKey = attribute.Key("syncguard.fence")
	// KeyHashKey is lockdriver.HashKey of the task's lock key; the raw key
	// is never recorded (delivery spans).
	KeyHashKey = attribute.Key("syncguard.key.hash")
)

// Values of TaskOutcomeKey.
const (
	TaskOutcomeRan       = "ran"        // the handler ran under the lease and returned nil
	TaskOutcomeDuplicate = "duplicate"  // the key was busy: requeued or dropped (DroppedKey)
	TaskOutcomeDone      = "done"       // the key's done marker was live: dropped
	TaskOutcomeLimited   = "limited"    // every slot of the limit was taken: requeued or dropped (DroppedKey)
	TaskOutcomeLeaseLost = "lease_lost" // the handler ran, and the lease was lost meanwhile
	TaskOutcomeFailed    = "failed"     // the handler, the key or the lock failed
)

// messaging.system of every span.
var systemAsynq = semconv.MessagingSystemKey.String("asynq")

// tracing chooses the tracer of a Guard or of Enqueue: the one of the
// TracerProvider set with WithTracerProvider, else of the global one of
// the moment.
type tracing struct {
	tp  trace.TracerProvider      // WithTracerProvider's; nil: the global one
	cur atomic.Pointer[tracerFor] // the tracer of the provider last seen
}

// tracerFor is the tracer of provider tp; nil when tp records nothing.
type tracerFor struct {
	tp     trace.TracerProvider
	tracer trace.Tracer
}

// tracer returns the tracer to use now, or nil when the provider records
// nothing: then no span is started, so a delivery allocates nothing for
// tracing.
func (tr *tracing) tracer() trace.Tracer {
	tp := tr.tp
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if c := tr.cur.Load(); c != nil && sameProvider(c.tp, tp) {
		return c.tracer
	}
	c := &tracerFor{tp: tp}
	if !noopProvider(tp) {
		c.tracer = tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL))
	}
	tr.cur.Store(c)
	return c.tracer
}

// sameProvider reports whether a and b are the same provider, without
// comparing values whose type cannot be compared (which would panic).
func sameProvider(a, b trace.TracerProvider) bool {
	ta := reflect.TypeOf(a)
	return ta == reflect.TypeOf(b) && ta != nil && ta.Comparable() && a == b
}

// noopProvider reports whether tp records nothing: OpenTelemetry's no-op
// provider, or the global one while no provider has been set (its spans
// record nothing, yet starting one allocates).
func noopProvider(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case tracenoop.TracerProvider, *tracenoop.TracerProvider:
		return true
	}
	t := reflect.TypeOf(tp)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.PkgPath() {
	case "go.opentelemetry.io/otel/internal/global":
		return true // replaced by the provider set, once one is
	case "go.opentelemetry.io/otel/trace":
		return t.Name() == "noopTracerProvider"
	}
	return false
}

// TracingOption is an Option of New and an EnqueueOption of Enqueue.
type TracingOption interface {
	Option
	EnqueueOption
}

type tracingOption struct{ tp trace.TracerProvider }

func (o tracingOption) apply(c *config)               { c.tracerProvider = o.tp }
func (o tracingOption) applyEnqueue(c *enqueueConfig) { c.tracerProvider = o.tp }

// WithTracerProvider sets the TracerProvider of the spans of a Guard's
// deliveries, or of Enqueue's; nil, the default, means the global one of
// the moment. With OpenTelemetry's no-op provider, or none set, no span
// is started.
func WithTracerProvider(tp trace.TracerProvider) TracingOption {
	return tracingOption{tp: tp}
}

// delivery is what the Guard learnt of one delivery, for its span.
type delivery struct {
	span  trace.Span // the delivery's; nil when not traced
	key   string     // the task's lock key; "" when it could not be derived
	ran   bool       // the handler was called under a lease
	fence lock.Fence // the lease's fence, when ran
}

// startDelivery starts the CONSUMER span of a delivery of t, a child of
// the trace context in t's headers (read with the global propagator) when
// they carry one, else of ctx. It returns ctx unchanged and a nil span when
// no span is recorded. The returned context holds the span even when the
// sampler drops it, so that the lock's spans follow its decision.
func (g *Guard) startDelivery(ctx context.Context, t *asynq.Task) (context.Context, trace.Span) {
	tracer := g.tracing.tracer()
	if tracer == nil {
		return ctx, nil
	}
	queue, ok := asynq.GetQueueName(ctx)
	if !ok {
		queue = defaultQueue
	}
	name, attrs := messaging(semconv.MessagingOperationTypeProcess, "process", queue, t.Type(), 2)
	if id, ok := asynq.GetTaskID(ctx); ok {
		attrs = append(attrs, semconv.MessagingMessageID(id))
	}
	if n, ok := asynq.GetRetryCount(ctx); ok {
		attrs = append(attrs, RetryCountKey.Int(n))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...)}
	if h := t.Headers(); len(h) > 0 {
		pctx := otel.GetTextMapPropagator().Extract(ctx, propagation.MapCarrier(h))
		if sc := trace.SpanContextFromContext(pctx); sc.IsValid() && sc.IsRemote() {
			// The producer's context: the span continues its trace, and
			// links to it as the conventions recommend.
			ctx = pctx
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
		} else {
			ctx = pctx // baggage, if any
		}
	}
	return tracer.Start(ctx, name, opts...)
}

// messaging returns the span name and the messaging attributes of an
// operation (op, named name: "send" or "process") on queue for a task of
// type typ, with room for extra more. A queue or type that is not valid
// UTF-8, as attribute values must be, is left out.
func messaging(op attribute.KeyValue, name, queue, typ string, extra int) (string, []attribute.KeyValue) {
	attrs := make([]attribute.KeyValue, 0, 5+extra)
	attrs = append(attrs, systemAsynq, op, semconv.MessagingOperationName(name))
	if utf8.ValidString(queue) {
		attrs = append(attrs, semconv.MessagingDestinationName(queue))
		name += " " + queue
	}
	if utf8.ValidString(typ) {
		attrs = append(attrs, TaskTypeKey.String(typ))
	}
	return name, attrs
}

// endDelivery ends the delivery's span, once, with what became of it: d
// as the Guard saw it and err, the handler's result. Its status is Error
// only when IsFailure(err).
func endDelivery(d *delivery, err error) {
	span := d.span
	if span == nil {
		return
	}
	d.span = nil // ended once
	defer span.End()
	if !span.IsRecording() {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 4)
	if d.key != "" {
		attrs = append(attrs, KeyHashKey.String(lockdriver.HashKey(d.key)))
	}
	if d.ran {
		attrs = append(attrs, FenceKey.String(string(d.fence)))
	}
	var dup *DuplicateError
	var lim *LimitError
	switch {
	case err == nil:
		attrs = append(attrs, TaskOutcomeKey.String(TaskOutcomeRan))
	case errors.As(err, &dup) && dup.Done:
		attrs = append(attrs, TaskOutcomeKey.String(TaskOutcomeDone), DroppedKey.Bool(true))
	case dup != nil:
		attrs = append(attrs, TaskOutcomeKey.String(TaskOutcomeDuplicate), DroppedKey.Bool(dup.Dropped))
	case errors.As(err, &lim):
		attrs = append(attrs, TaskOutcomeKey.String(TaskOutcomeLimited), DroppedKey.Bool(lim.Dropped))
	case d.ran && errors.Is(err, lock.ErrLeaseLost):
		attrs = append(attrs, TaskOutcomeKey.String(TaskOutcomeLeaseLost))
	default:
		attrs = append(attrs, TaskOutcomeKey.String(TaskOutcomeFailed))
	}
	span.SetAttributes(attrs...)
	if IsFailure(err) {
		setError(span, err)
	}
}

// errPanicked is the error of a delivery whose handler panicked, for its
// span.
var errPanicked = errors.New("asynqlock: the handler panicked")

// endIfPanicked, deferred, ends the span of d as failed when the
// handler's panic skipped endDelivery; the panic goes on (asynq recovers
// it).
func endIfPanicked(d *delivery) {
	if d.span != nil {
		endDelivery(d, errPanicked)
	}
}

// setError marks span as failed with err: error.type, the error as an
// event, and the Error status.
func setError(span trace.Span, err error) {
	span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// ExtendedEvent is the event on a delivery's span for each extension of
// its lease by the heartbeat, with the lease's new expiry (ExpiresAtKey).
// The extensions themselves are the backend's spans: on the Redis
// backend, "syncguard.extend_batch" root spans shared by many leases.
const ExtendedEvent = "syncguard.extended"

// ExpiresAtKey is the expiry of an extended lease, by the backend's
// clock, in RFC 3339 (ExtendedEvent).
const ExpiresAtKey = attribute.Key("syncguard.expires_at")

// tracedHeartbeat is the Guard's heartbeat that also adds an
// ExtendedEvent to span per extension.
func (g *Guard) tracedHeartbeat(span trace.Span) lock.Heartbeat {
	hb := g.heartbeat
	onExtend := hb.OnExtend
	hb.OnExtend = func(exp time.Time) {
		span.AddEvent(ExtendedEvent, trace.WithAttributes(ExpiresAtKey.String(exp.UTC().Format(time.RFC3339Nano))))
		if onExtend != nil {
			onExtend(exp)
		}
	}
	return hb
}

// errorType is the error.type of a failed task: the lock.Code of a lock
// failure, else the Go type of the error.
func errorType(err error) string {
	if c := lock.CodeOf(err); c != "" {
		return string(c)
	}
	return fmt.Sprintf("%T", err)
}
