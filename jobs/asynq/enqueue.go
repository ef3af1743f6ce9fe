package asynqlock

import (
	"context"
	"maps"
	"reflect"
	"unsafe"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// EnqueueOption configures Enqueue: TaskOptions, WithTracerProvider,
// UniqueUntilDone.
type EnqueueOption interface {
	applyEnqueue(*enqueueConfig)
}

type enqueueConfig struct {
	taskOpts       []asynq.Option
	tracerProvider trace.TracerProvider
	unique         *uniqueOption // UniqueUntilDone's
}

type taskOptions []asynq.Option

func (o taskOptions) applyEnqueue(c *enqueueConfig) { c.taskOpts = append(c.taskOpts, o...) }

// TaskOptions passes asynq's options, such as asynq.Queue or
// asynq.ProcessIn, to the client's enqueue, after the task's own.
func TaskOptions(opts ...asynq.Option) EnqueueOption { return taskOptions(opts) }

// Enqueue enqueues t through c, as c.EnqueueContext(ctx, t, ...) does,
// with the trace context of ctx in the task's headers (written with the
// global propagator, otel.GetTextMapPropagator), so that the deliveries'
// spans (see Guard.Wrap) continue the caller's trace. The task's own
// headers are kept, and so are its options; t itself is not changed.
// The enqueue is a span of kind PRODUCER, "send <queue>", unless no
// TracerProvider is set. With UniqueUntilDone, a duplicate of a live task
// is refused with an error matching ErrDuplicateTask. A nil client or
// task, or a bad UniqueUntilDone, is refused with an InvalidArgument
// *lock.Error, nothing enqueued.
func Enqueue(ctx context.Context, c *asynq.Client, t *asynq.Task, opts ...EnqueueOption) (*asynq.TaskInfo, error) {
	if c == nil {
		return nil, lockdriver.InvalidArgument("enqueue", "nil asynq client")
	}
	if t == nil {
		return nil, lockdriver.InvalidArgument("enqueue", "nil task")
	}
	var cfg enqueueConfig
	for _, o := range opts {
		if o != nil {
			o.applyEnqueue(&cfg)
		}
	}
	var u *uniqueEnqueue
	if cfg.unique != nil {
		var err error
		if u, err = newUniqueEnqueue(c, t, &cfg); err != nil {
			return nil, err
		}
	}
	tr := &globalTracing
	if cfg.tracerProvider != nil {
		tr = &tracing{tp: cfg.tracerProvider}
	}
	var span trace.Span
	if tracer := tr.tracer(); tracer != nil {
		name, attrs := messaging(semconv.MessagingOperationTypeSend, "send", queueOf(t, cfg.taskOpts), t.Type(), 0)
		ctx, span = tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
		defer span.End()
	}
	var info *asynq.TaskInfo
	var err error
	if u != nil {
		u.t = withTraceContext(ctx, u.t)
		info, err = u.run(ctx)
	} else {
		info, err = c.EnqueueContext(ctx, withTraceContext(ctx, t), cfg.taskOpts...)
	}
	if span != nil && span.IsRecording() {
		if err != nil {
			setError(span, err)
		} else {
			span.SetAttributes(semconv.MessagingMessageID(info.ID))
		}
	}
	return info, err
}

// globalTracing is Enqueue's tracer when no WithTracerProvider is given.
var globalTracing tracing

// withTraceContext returns t with the trace context of ctx added to its
// headers, or t itself when the propagator writes nothing or when t's
// options cannot be carried over.
func withTraceContext(ctx context.Context, t *asynq.Task) *asynq.Task {
	carrier := propagation.MapCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	if len(carrier) == 0 {
		return t
	}
	// The caller's context replaces a stale one.
	if with, ok := withHeaders(t, carrier); ok {
		return with
	}
	return t
}

// withHeaders returns a copy of t with the headers add set over its own;
// ok is false when t's options cannot be carried over.
func withHeaders(t *asynq.Task, add map[string]string) (with *asynq.Task, ok bool) {
	opts, ok := taskOwnOptions(t)
	if !ok {
		return nil, false
	}
	headers := maps.Clone(t.Headers())
	if headers == nil {
		headers = make(map[string]string, len(add))
	}
	maps.Copy(headers, add)
	return asynq.NewTaskWithHeaders(t.Type(), t.Payload(), headers, opts...), true
}

// taskOptsField is the offset of asynq.Task's options, which asynq does
// not export; ok is false when the field is not there, or not of the
// type this package was written against (another asynq version).
var taskOptsField = func() (offset uintptr, ok bool) {
	f, found := reflect.TypeFor[asynq.Task]().FieldByName("opts")
	if !found || f.Type != reflect.TypeFor[[]asynq.Option]() {
		return 0, false
	}
	return f.Offset, true
}

var taskOptsOffset, taskOptsKnown = taskOptsField()

// taskOwnOptions returns the options t was built with (asynq.NewTask's),
// which a task rebuilt with new headers must keep; ok is false when they
// cannot be read.
func taskOwnOptions(t *asynq.Task) (opts []asynq.Option, ok bool) {
	if !taskOptsKnown {
		return nil, false
	}
	// asynq has no accessor for them; the field's type was checked above.
	return *(*[]asynq.Option)(unsafe.Add(unsafe.Pointer(t), taskOptsOffset)), true
}

// queueOf returns the queue a task enqueued with the options of t and
// opts goes to: the last asynq.Queue's, else asynq's default.
func queueOf(t *asynq.Task, opts []asynq.Option) string {
	if v, ok := optionOf(t, opts, asynq.QueueOpt); ok {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return defaultQueue
}
