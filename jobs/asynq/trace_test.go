package asynqlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	otellock "github.com/syncguard-go/syncguard/otel"
)

// These tests look at a task's trace as a tracing backend shows it: the
// SDK's span recorder behind a real asynq server and client on real
// Redis, the lock backend wrapped by otellock.

// tracer is one test's TracerProvider and the spans it ended.
type tracer struct {
	rec *tracetest.SpanRecorder
	tp  *sdktrace.TracerProvider
}

func newTracer(t *testing.T) *tracer {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return &tracer{rec: rec, tp: tp}
}

// tracedEnv returns e's backend wrapped by otellock on tr's provider, and
// a Guard on it with opts, recording its deliveries on tr's provider.
func (tr *tracer) guard(t *testing.T, e *env, opts ...asynqlock.Option) *asynqlock.Guard {
	t.Helper()
	b := otellock.Wrap(e.backend, otellock.WithTracerProvider(tr.tp), otellock.WithMeterProvider(metricnoop.NewMeterProvider()))
	g, err := asynqlock.New(b, append([]asynqlock.Option{asynqlock.WithTracerProvider(tr.tp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// ended returns the spans ended so far.
func (tr *tracer) ended() []sdktrace.ReadOnlySpan { return tr.rec.Ended() }

// kind returns the spans of kind k.
func ofKind(spans []sdktrace.ReadOnlySpan, k trace.SpanKind) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.SpanKind() == k {
			out = append(out, s)
		}
	}
	return out
}

// attr returns the value of attribute k of s, and whether s has it.
func attr(s sdktrace.ReadOnlySpan, k attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func attrString(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	v, _ := attr(s, k)
	return v.Emit()
}

// dumpSpans writes every name, attribute, event, link attribute and
// status of spans as text, to search for values that must not be there.
func dumpSpans(spans []sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	kvs := func(attrs []attribute.KeyValue) {
		for _, kv := range attrs {
			fmt.Fprintf(&b, " %s=%s", kv.Key, kv.Value.Emit())
		}
	}
	for _, s := range spans {
		fmt.Fprintf(&b, "%s [%s]", s.Name(), s.Status().Description)
		kvs(s.Attributes())
		for _, ev := range s.Events() {
			fmt.Fprintf(&b, " event %s", ev.Name)
			kvs(ev.Attributes)
		}
		for _, l := range s.Links() {
			b.WriteString(" link")
			kvs(l.Attributes)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// waitSpans waits until cond holds for the ended spans, failing the test
// after timeout.
func (tr *tracer) waitSpans(t *testing.T, timeout time.Duration, what string, cond func([]sdktrace.ReadOnlySpan) bool) []sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		spans := tr.ended()
		if cond(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not reached within %v; spans:\n%s", what, timeout, dumpSpans(spans))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// consumers returns the delivery spans among spans, and whether there
// are n of them.
func consumers(n int) func([]sdktrace.ReadOnlySpan) bool {
	return func(spans []sdktrace.ReadOnlySpan) bool { return len(ofKind(spans, trace.SpanKindConsumer)) >= n }
}

// TestTraceOfDuplicates: one task enqueued three times under a request's
// span, on a Guard with a done window: one delivery runs, the others are
// duplicates. Every delivery is a CONSUMER span in the request's trace,
// the child of its enqueue's PRODUCER span and linked to it; every lock
// span of a delivery (but the heartbeat's batches) is inside it, and so is
// the handler's own span. Only the run has a fence, no span has the Error
// status, and no span carries the raw key, the payload or a header value.
func TestTraceOfDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tr := newTracer(t)
	g := tr.guard(t, e, asynqlock.WithTTL(time.Second), asynqlock.WithDoneTTL(time.Minute))
	payload := "zq7-Secret-Payload-" + lockdriver.NewLockID()[:6]
	header := "zq7-Secret-Header-" + lockdriver.NewLockID()[:6]
	var runs atomic.Int32
	var lostHeader atomic.Bool
	e.serve(t, g, func(ctx context.Context, task *asynq.Task) error {
		if task.Headers()["x-tenant"] != header {
			lostHeader.Store(true)
		}
		_, work := tr.tp.Tracer("handler").Start(ctx, "render")
		defer work.End()
		runs.Add(1)
		time.Sleep(400 * time.Millisecond) // the duplicates arrive meanwhile
		return nil
	}, asynq.Config{RetryDelayFunc: asynqlock.RetryDelay(quickRetry), IsFailure: asynqlock.IsFailure})

	ctx, root := tr.tp.Tracer("test").Start(bg(t), "POST /invoices")
	task := asynq.NewTaskWithHeaders(taskType, []byte(payload), map[string]string{"x-tenant": header})
	for i := range 3 {
		info, err := asynqlock.Enqueue(ctx, e.client, task, asynqlock.WithTracerProvider(tr.tp),
			asynqlock.TaskOptions(asynq.Queue(e.queue), asynq.TaskID(fmt.Sprintf("inv-%d", i))))
		if err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		if info.Queue != e.queue {
			t.Errorf("enqueued on %q, want %q", info.Queue, e.queue)
		}
	}
	root.End()
	if len(task.Headers()) != 1 {
		t.Errorf("Enqueue changed the caller's task: headers %v", task.Headers())
	}
	e.waitQueue(t, 20*time.Second, "all tasks handled", drained)
	spans := tr.waitSpans(t, 5*time.Second, "three deliveries' spans", consumers(3))

	if got := runs.Load(); got != 1 {
		t.Errorf("handler runs = %d, want 1", got)
	}
	if lostHeader.Load() {
		t.Error("the task's own header did not reach the handler")
	}
	tid := root.SpanContext().TraceID()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	producers := map[string]sdktrace.ReadOnlySpan{} // by task id
	for _, p := range ofKind(spans, trace.SpanKindProducer) {
		if p.Name() != "send "+e.queue || p.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("producer span %q, parent %v; want %q under the request's span", p.Name(), p.Parent().SpanID(), "send "+e.queue)
		}
		if sys, op := attrString(p, "messaging.system"), attrString(p, "messaging.operation.type"); sys != "asynq" || op != "send" {
			t.Errorf("producer span: messaging.system %q, operation.type %q; want asynq, send", sys, op)
		}
		producers[attrString(p, "messaging.message.id")] = p
	}
	if len(producers) != 3 {
		t.Fatalf("producer spans by task id: %d, want 3\n%s", len(producers), dumpSpans(spans))
	}
	outcomes := map[string]int{}
	for _, c := range ofKind(spans, trace.SpanKindConsumer) {
		id := attrString(c, "messaging.message.id")
		p, ok := producers[id]
		switch {
		case !ok:
			t.Errorf("delivery of task %q: no producer span", id)
		case c.SpanContext().TraceID() != tid || c.Parent().SpanID() != p.SpanContext().SpanID():
			t.Errorf("delivery of %s: trace %v parent %v, want trace %v parent %v (its enqueue)",
				id, c.SpanContext().TraceID(), c.Parent().SpanID(), tid, p.SpanContext().SpanID())
		case len(c.Links()) != 1 || c.Links()[0].SpanContext.SpanID() != p.SpanContext().SpanID():
			t.Errorf("delivery of %s: links %v, want one to its enqueue", id, c.Links())
		}
		if c.Name() != "process "+e.queue || attrString(c, "messaging.destination.name") != e.queue ||
			attrString(c, "messaging.system") != "asynq" || attrString(c, "messaging.operation.type") != "process" ||
			attrString(c, asynqlock.TaskTypeKey) != taskType {
			t.Errorf("delivery span %q lacks the messaging attributes: %v", c.Name(), c.Attributes())
		}
		if _, ok := attr(c, asynqlock.RetryCountKey); !ok {
			t.Errorf("delivery of %s: no retry count", id)
		}
		out := attrString(c, asynqlock.TaskOutcomeKey)
		outcomes[out]++
		_, fenced := attr(c, asynqlock.FenceKey)
		if fenced != (out == asynqlock.TaskOutcomeRan) {
			t.Errorf("delivery of %s: outcome %s, fence recorded %v", id, out, fenced)
		}
		if c.Status().Code == codes.Error {
			t.Errorf("delivery of %s (%s) has the Error status", id, out)
		}
		if out == asynqlock.TaskOutcomeRan && !hasEvent(c, asynqlock.ExtendedEvent) {
			t.Errorf("the run's span has no %s event: its 400ms outlived a third of the 1s lease", asynqlock.ExtendedEvent)
		}
	}
	if outcomes[asynqlock.TaskOutcomeRan] != 1 || outcomes[asynqlock.TaskOutcomeDuplicate]+outcomes[asynqlock.TaskOutcomeDone] < 2 {
		t.Errorf("outcomes %v, want one run and the rest duplicates", outcomes)
	}
	lockSpans := 0
	for _, s := range spans {
		if s.Name() == "render" {
			if parent, ok := byID[s.Parent().SpanID()]; !ok || parent.SpanKind() != trace.SpanKindConsumer {
				t.Error("the handler's span is not a child of the delivery's")
			}
		}
		if !strings.HasPrefix(s.Name(), "syncguard.") || s.Name() == "syncguard.extend_batch" {
			continue
		}
		lockSpans++
		if !underConsumer(s, byID) {
			t.Errorf("lock span %s (parent %v) is not inside a delivery's span", s.Name(), s.Parent().SpanID())
		}
	}
	if lockSpans < 4 { // at least an acquire per delivery and a release
		t.Errorf("lock spans: %d, want one per call of the deliveries\n%s", lockSpans, dumpSpans(spans))
	}
	key := asynqlock.DefaultPrefix + asynqlock.DefaultKeyIn(e.queue, task)
	if !strings.Contains(dumpSpans(spans), lockdriver.HashKey(key)) {
		t.Fatalf("the key's hash is not in the spans: the search for the raw key proves nothing\n%s", dumpSpans(spans))
	}
	checkNoRawValues(t, spans, map[string]string{"payload": payload, "header": header, "key": key})
}

// hasEvent reports whether s has an event named name.
func hasEvent(s sdktrace.ReadOnlySpan, name string) bool {
	for _, ev := range s.Events() {
		if ev.Name == name {
			return true
		}
	}
	return false
}

// underConsumer reports whether s descends from a CONSUMER span through
// lock spans only.
func underConsumer(s sdktrace.ReadOnlySpan, byID map[trace.SpanID]sdktrace.ReadOnlySpan) bool {
	for range 8 {
		p, ok := byID[s.Parent().SpanID()]
		switch {
		case !ok:
			return false
		case p.SpanKind() == trace.SpanKindConsumer:
			return true
		case !strings.HasPrefix(p.Name(), "syncguard."):
			return false
		}
		s = p
	}
	return false
}

// checkNoRawValues fails t if any of values appears in spans.
func checkNoRawValues(t *testing.T, spans []sdktrace.ReadOnlySpan, values map[string]string) {
	t.Helper()
	dump := dumpSpans(spans)
	for what, v := range values {
		if strings.Contains(dump, v) {
			t.Errorf("the %s %q is in the spans:\n%s", what, v, dump)
		}
	}
}

// TestTraceOfFailedTask: a task that fails once, then succeeds when
// asynq retries it: two deliveries in the producer's trace, the first
// with the Error status and the outcome failed, the retry ran.
func TestTraceOfFailedTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tr := newTracer(t)
	g := tr.guard(t, e, asynqlock.WithTTL(time.Second))
	var calls atomic.Int32
	e.serve(t, g, func(context.Context, *asynq.Task) error {
		if calls.Add(1) == 1 {
			return errors.New("render failed")
		}
		return nil
	}, asynq.Config{RetryDelayFunc: asynqlock.RetryDelay(quickRetry), IsFailure: asynqlock.IsFailure})

	ctx, root := tr.tp.Tracer("test").Start(bg(t), "POST /invoices")
	_, err := asynqlock.Enqueue(ctx, e.client, asynq.NewTask(taskType, []byte("fails-once"), asynq.Queue(e.queue)),
		asynqlock.WithTracerProvider(tr.tp))
	root.End()
	if err != nil {
		t.Fatal(err)
	}
	spans := tr.waitSpans(t, 20*time.Second, "two deliveries", consumers(2))
	deliveries := ofKind(spans, trace.SpanKindConsumer)
	for _, c := range deliveries {
		if c.SpanContext().TraceID() != root.SpanContext().TraceID() {
			t.Errorf("delivery in trace %v, want the producer's %v", c.SpanContext().TraceID(), root.SpanContext().TraceID())
		}
		retry, _ := attr(c, asynqlock.RetryCountKey)
		out := attrString(c, asynqlock.TaskOutcomeKey)
		failed := retry.AsInt64() == 0
		if wantOut := map[bool]string{true: asynqlock.TaskOutcomeFailed, false: asynqlock.TaskOutcomeRan}[failed]; out != wantOut {
			t.Errorf("delivery at retry %d: outcome %s, want %s", retry.AsInt64(), out, wantOut)
		}
		if got := c.Status().Code == codes.Error; got != failed {
			t.Errorf("delivery at retry %d (%s): Error status %v, want %v", retry.AsInt64(), out, got, failed)
		}
	}
	if len(deliveries) != 2 {
		t.Errorf("deliveries: %d, want 2", len(deliveries))
	}
}

// TestTraceOfLimitedTask: a task that finds its limit's one slot taken
// is limited, not failed: no Error status.
func TestTraceOfLimitedTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tr := newTracer(t)
	g := tr.guard(t, e, asynqlock.WithLimit(1), asynqlock.WithLimitWait(0), asynqlock.WithPolicy(asynqlock.Drop))
	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	h := g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		once.Do(func() { close(held) })
		<-release
		return nil
	}))
	ctx := bg(t)
	errc := make(chan error, 1)
	go func() { errc <- h.ProcessTask(ctx, asynq.NewTask(taskType, []byte("a"))) }()
	<-held
	err := h.ProcessTask(ctx, asynq.NewTask(taskType, []byte("b")))
	close(release)
	if !asynqlock.IsLimited(err) {
		t.Fatalf("second task: %v, want a *LimitError", err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]codes.Code{}
	for _, c := range ofKind(tr.ended(), trace.SpanKindConsumer) {
		outcomes[attrString(c, asynqlock.TaskOutcomeKey)] = c.Status().Code
		if attrString(c, asynqlock.TaskOutcomeKey) == asynqlock.TaskOutcomeLimited && attrString(c, asynqlock.DroppedKey) != "true" {
			t.Errorf("limited delivery under Drop: %s = %q, want true", asynqlock.DroppedKey, attrString(c, asynqlock.DroppedKey))
		}
	}
	if code, ok := outcomes[asynqlock.TaskOutcomeLimited]; !ok || code == codes.Error {
		t.Errorf("outcomes and statuses %v: want a limited delivery without the Error status", outcomes)
	}
	if _, ok := outcomes[asynqlock.TaskOutcomeRan]; !ok {
		t.Errorf("outcomes %v: want one that ran", outcomes)
	}
}

// TestTraceOfLostLease: the syncguard.lease_lost event lands on the
// delivery's span, which ends with the outcome lease_lost and the Error
// status.
func TestTraceOfLostLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tr := newTracer(t)
	g := tr.guard(t, e, asynqlock.WithTTL(90*time.Millisecond))
	err := g.Wrap(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		l, _ := lock.LeaseFrom(ctx)
		if err := e.lockRC.Del(ctx, e.storageKey(t, l)).Err(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
		return nil
	})).ProcessTask(bg(t), asynq.NewTask(taskType, []byte("lost")))
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("ProcessTask = %v, want lock.ErrLeaseLost", err)
	}
	deliveries := ofKind(tr.ended(), trace.SpanKindConsumer)
	if len(deliveries) != 1 {
		t.Fatalf("deliveries: %d, want 1", len(deliveries))
	}
	c := deliveries[0]
	events := 0
	for _, ev := range c.Events() {
		if ev.Name == "syncguard.lease_lost" {
			events++
		}
	}
	if events != 1 || attrString(c, asynqlock.TaskOutcomeKey) != asynqlock.TaskOutcomeLeaseLost || c.Status().Code != codes.Error {
		t.Errorf("delivery span: %d lease_lost events, outcome %s, status %v; want 1, lease_lost, Error\n%s",
			events, attrString(c, asynqlock.TaskOutcomeKey), c.Status().Code, dumpSpans(tr.ended()))
	}
}

// TestTraceOfBadHeaders: tasks whose headers are no trace context, or a
// broken one, run as they would untraced, each under a delivery span of a
// new trace; a valid traceparent beside a broken tracestate is continued.
// No header value appears in any span.
func TestTraceOfBadHeaders(t *testing.T) {
	t.Parallel()
	const (
		valid   = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		validID = "b7ad6b7169203331"
	)
	big := strings.Repeat("zq7", 10<<10/3)
	tests := []struct {
		desc    string
		headers map[string]string
		follows bool
	}{
		{desc: "nil headers"},
		{desc: "empty headers", headers: map[string]string{}},
		{desc: "B3", headers: map[string]string{
			"b3":           "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1",
			"X-B3-TraceId": "80f198ee56343ba864fe8b2a57d3eff7", "X-B3-SpanId": "e457b5a2e4d86bd1", "X-B3-Sampled": "1",
		}},
		{desc: "garbage traceparent", headers: map[string]string{"traceparent": "zq7 not a trace context at all"}},
		{desc: "traceparent too short", headers: map[string]string{"traceparent": valid[:len(valid)-1]}},
		{desc: "traceparent too long", headers: map[string]string{"traceparent": valid + "0"}},
		{desc: "traceparent with invalid characters", headers: map[string]string{"traceparent": strings.Replace(valid, "0af7", "0aZ7", 1)}},
		{desc: "10 KiB traceparent", headers: map[string]string{"traceparent": big}},
		{desc: "10 KiB baggage and header", headers: map[string]string{"baggage": big, "x-blob": big + "x"}},
		{desc: "valid traceparent, 10 KiB tracestate", headers: map[string]string{"traceparent": valid, "tracestate": big + "s"}, follows: true},
	}
	e := newEnv(t)
	tr := newTracer(t)
	g := tr.guard(t, e, asynqlock.WithTTL(time.Second))
	var mu sync.Mutex
	runs := map[string]int{}
	sameHeaders := map[string]bool{}
	e.serve(t, g, func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		mu.Lock()
		defer mu.Unlock()
		runs[id]++
		var i int
		_, _ = fmt.Sscanf(id, "bad-%d", &i)
		sameHeaders[id] = len(task.Headers()) == len(tests[i].headers)
		for k, v := range tests[i].headers {
			sameHeaders[id] = sameHeaders[id] && task.Headers()[k] == v
		}
		return nil
	}, asynq.Config{RetryDelayFunc: asynqlock.RetryDelay(quickRetry), IsFailure: asynqlock.IsFailure})

	for i, tt := range tests {
		task := asynq.NewTaskWithHeaders(taskType, []byte(tt.desc), tt.headers)
		if tt.headers == nil {
			task = asynq.NewTask(taskType, []byte(tt.desc))
		}
		if _, err := e.client.Enqueue(task, asynq.Queue(e.queue), asynq.TaskID(fmt.Sprintf("bad-%d", i))); err != nil {
			t.Fatalf("%s: enqueue: %v", tt.desc, err)
		}
	}
	spans := tr.waitSpans(t, 20*time.Second, "a delivery per task", consumers(len(tests)))
	byTask := map[string]sdktrace.ReadOnlySpan{}
	for _, c := range ofKind(spans, trace.SpanKindConsumer) {
		byTask[attrString(c, "messaging.message.id")] = c
	}
	values := map[string]string{}
	mu.Lock()
	defer mu.Unlock()
	for i, tt := range tests {
		id := fmt.Sprintf("bad-%d", i)
		c, ok := byTask[id]
		switch {
		case runs[id] != 1 || !sameHeaders[id]:
			t.Errorf("%s: runs %d, headers intact %v; want 1, true", tt.desc, runs[id], sameHeaders[id])
		case !ok:
			t.Errorf("%s: no delivery span", tt.desc)
		case tt.follows && (c.Parent().SpanID().String() != validID || len(c.Links()) != 1):
			t.Errorf("%s: parent %v, %d links; want the traceparent's %s, linked", tt.desc, c.Parent().SpanID(), len(c.Links()), validID)
		case !tt.follows && (c.Parent().IsValid() || len(c.Links()) != 0):
			t.Errorf("%s: parent %v, %d links; want a new trace", tt.desc, c.Parent().SpanID(), len(c.Links()))
		case attrString(c, asynqlock.TaskOutcomeKey) != asynqlock.TaskOutcomeRan:
			t.Errorf("%s: outcome %s, want ran", tt.desc, attrString(c, asynqlock.TaskOutcomeKey))
		}
		for k, v := range tt.headers {
			if len(v) > 8 {
				values[tt.desc+" "+k] = v
			}
		}
	}
	checkNoRawValues(t, spans, values)
}

// TestTracedHeartbeatKeepsOwn: on a traced delivery, the heartbeat given
// with WithLockOptions keeps its interval and its OnExtend, and each
// extension is also an event on the delivery's span.
func TestTracedHeartbeatKeepsOwn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tr := newTracer(t)
	var extended atomic.Int32
	g := tr.guard(t, e, asynqlock.WithTTL(time.Minute), asynqlock.WithLockOptions(lock.WithHeartbeat(lock.Heartbeat{
		Interval: 20 * time.Millisecond,
		OnExtend: func(time.Time) { extended.Add(1) },
	})))
	err := g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		deadline := time.Now().Add(10 * time.Second)
		for extended.Load() < 3 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		return nil
	})).ProcessTask(bg(t), asynq.NewTask(taskType, []byte("beats")))
	if err != nil {
		t.Fatal(err)
	}
	if n := extended.Load(); n < 3 {
		t.Fatalf("own OnExtend called %d times within 10s at a 20ms interval (1m TTL), want 3", n)
	}
	deliveries := ofKind(tr.ended(), trace.SpanKindConsumer)
	events := 0
	for _, ev := range deliveries[0].Events() {
		if ev.Name == asynqlock.ExtendedEvent {
			events++
		}
	}
	if events < 3 {
		t.Errorf("%s events: %d, want one per extension (3 or more)", asynqlock.ExtendedEvent, events)
	}
}

// TestTraceOfInvalidUTF8: a task type that is not valid UTF-8 is left out
// of the span, whose attributes must be valid UTF-8; the task runs.
func TestTraceOfInvalidUTF8(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tr := newTracer(t)
	g := tr.guard(t, e)
	ran := false
	err := g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		ran = true
		return nil
	})).ProcessTask(bg(t), asynq.NewTask("report:\xff\xfe", []byte("p")))
	if err != nil || !ran {
		t.Fatalf("ProcessTask = %v, ran %v; want nil, true", err, ran)
	}
	deliveries := ofKind(tr.ended(), trace.SpanKindConsumer)
	if len(deliveries) != 1 {
		t.Fatalf("deliveries: %d, want 1", len(deliveries))
	}
	if _, ok := attr(deliveries[0], asynqlock.TaskTypeKey); ok {
		t.Errorf("the invalid task type was recorded")
	}
	if dump := dumpSpans(tr.ended()); !utf8.ValidString(dump) {
		t.Errorf("the spans are not valid UTF-8:\n%q", dump)
	}
}

// TestTraceOfPanic: a handler's panic still ends the delivery's span,
// with the Error status, and goes on to asynq.
func TestTraceOfPanic(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tr := newTracer(t)
	g := tr.guard(t, e)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the handler's panic", r)
			}
		}()
		_ = g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
			panic("boom")
		})).ProcessTask(bg(t), asynq.NewTask(taskType, []byte("panics")))
	}()
	deliveries := ofKind(tr.ended(), trace.SpanKindConsumer)
	if len(deliveries) != 1 || deliveries[0].Status().Code != codes.Error ||
		attrString(deliveries[0], asynqlock.TaskOutcomeKey) != asynqlock.TaskOutcomeFailed {
		t.Fatalf("deliveries after a panic: %s; want one, failed, Error", dumpSpans(deliveries))
	}
	for _, s := range tr.ended() {
		if strings.HasPrefix(s.Name(), "syncguard.release") && s.Parent().SpanID() != deliveries[0].SpanContext().SpanID() {
			t.Errorf("the release after the panic is not under the delivery's span")
		}
	}
}
