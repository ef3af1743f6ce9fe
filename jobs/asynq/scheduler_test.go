package asynqlock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/testkit/redistest"
	"go.opentelemetry.io/otel/trace"
)

// TestSchedulerBadInput: every bad argument is an InvalidArgument error
// saying what is wrong, and nothing reaches Redis.
func TestSchedulerBadInput(t *testing.T) {
	e := newEnv(t)
	asynqCmds := redistest.Count(e.asynqRC)
	task := asynq.NewTask("report:daily", nil)
	for _, tc := range []struct {
		desc string
		new  func() (*asynqlock.Scheduler, error)
		want string
	}{
		{"nil client", func() (*asynqlock.Scheduler, error) { return asynqlock.NewScheduler(nil, e.backend, "k", "a") }, "client is nil"},
		{"nil backend", func() (*asynqlock.Scheduler, error) { return asynqlock.NewScheduler(e.client, nil, "k", "a") }, "backend is nil"},
		{"empty key", func() (*asynqlock.Scheduler, error) { return asynqlock.NewScheduler(e.client, e.backend, "", "a") }, "key is empty"},
		{"empty identity", func() (*asynqlock.Scheduler, error) { return asynqlock.NewScheduler(e.client, e.backend, "k", "") }, "identity is empty"},
		{"zero TTL", func() (*asynqlock.Scheduler, error) {
			return asynqlock.NewScheduler(e.client, e.backend, "k", "a", election.WithTTL(0))
		}, "ttl must be at least 1s"},
		{"TTL under election.MinTTL", func() (*asynqlock.Scheduler, error) {
			return asynqlock.NewScheduler(e.client, e.backend, "k", "a", election.WithTTL(500*time.Millisecond))
		}, "election.MinTTL"},
		{"heartbeat over half the TTL", func() (*asynqlock.Scheduler, error) {
			return asynqlock.NewScheduler(e.client, e.backend, "k", "a", election.WithTTL(2*time.Second), election.WithHeartbeat(lock.Heartbeat{Interval: 1500 * time.Millisecond}))
		}, "heartbeat interval must be at most half the ttl"},
		{"identity of 300 bytes", func() (*asynqlock.Scheduler, error) {
			return asynqlock.NewScheduler(e.client, e.backend, "k", strings.Repeat("a", 300))
		}, "at most 256 bytes"},
		{"identity not UTF-8", func() (*asynqlock.Scheduler, error) {
			return asynqlock.NewScheduler(e.client, e.backend, "k", "node-\xff")
		}, "valid UTF-8"},
		{"not a Recorder", func() (*asynqlock.Scheduler, error) {
			return asynqlock.NewScheduler(e.client, struct{ lock.Backend }{e.backend}, "k", "a")
		}, "not a lock.Recorder"},
		{"key too long for its entries", func() (*asynqlock.Scheduler, error) {
			return asynqlock.NewScheduler(e.client, e.backend, strings.Repeat("k", 500), "a")
		}, "too long"},
	} {
		s, err := tc.new()
		if s != nil || lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, %v; want nil and an InvalidArgument error containing %q", tc.desc, s, err, tc.want)
		}
	}
	s, err := asynqlock.NewScheduler(e.client, e.backend, "k", "a")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		desc, spec string
		task       *asynq.Task
		opts       []asynq.Option
		want       string
	}{
		{"nil task", "@every 1s", nil, nil, "task is nil"},
		{"empty type", "@every 1s", asynq.NewTask(" ", nil), nil, "task type is empty"},
		{"three fields", "* * *", task, nil, `cronspec "* * *" is not valid`},
		{"six fields", "0 * * * * *", task, nil, "is not valid"},
		{"minute 61", "61 * * * *", task, nil, "is not valid"},
		{"bad every", "@every banana", task, nil, "is not valid"},
		{"every 0s", "@every 0s", task, nil, "the period must be at least 1s"},
		{"negative every", "@every -5s", task, nil, "the period must be at least 1s"},
		{"every under a second", "@every 500ms", task, nil, "the period must be at least 1s"},
		{"unknown descriptor", "@fortnightly", task, nil, "is not valid"},
		{"empty spec", "", task, nil, "is not valid"},
		{"bare time zone", "CRON_TZ=", task, nil, "the cron parser failed"},
		{"never fires", "0 0 30 2 *", task, nil, "never fires"},
		{"task id", "@every 1s", task, []asynq.Option{asynq.TaskID("mine")}, "TaskID is set by the scheduler"},
		{"unique", "@every 1s", task, []asynq.Option{asynq.Unique(time.Minute)}, "task id already deduplicates"},
		{"nil option", "@every 1s", task, []asynq.Option{nil}, "option 0 is nil"},
		{"bad name", "@every 1s", task, []asynq.Option{asynqlock.EntryName("a:b")}, "entry name"},
		{"empty name", "@every 1s", task, []asynq.Option{asynqlock.EntryName("")}, "entry name"},
		{"negative catch-up", "@every 1s", task, []asynq.Option{asynqlock.CatchUp(-time.Second)}, "catch-up window is negative"},
	} {
		id, err := s.Register(tc.spec, tc.task, tc.opts...)
		if id != "" || lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Register(%q): got %q, %v; want an InvalidArgument error containing %q", tc.desc, tc.spec, id, err, tc.want)
		}
	}
	if err := s.Unregister("nope"); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("Unregister of an unknown id: got %v, want InvalidArgument", err)
	}
	if n, m := e.cmds.Commands.Load(), asynqCmds.Commands.Load(); n+m != 0 {
		t.Errorf("commands sent: got %d to the lock client and %d to asynq's, want none", n, m)
	}
}

// TestSchedulerEntryID: the same registration gets the same id in every
// Scheduler whatever its options and their order (so every replica, and
// every version that changes only options, enqueues the same task ids);
// another spec, type or payload gets another id; EntryName sets it; two
// different entries with one id in a Scheduler are refused.
func TestSchedulerEntryID(t *testing.T) {
	e := newEnv(t)
	newS := func() *asynqlock.Scheduler {
		s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	register := func(spec string, task *asynq.Task, opts ...asynq.Option) string {
		t.Helper()
		id, err := newS().Register(spec, task, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	task := asynq.NewTask("report", []byte("p"))
	base := register("*/5 * * * *", task, asynq.Queue("q"), asynq.MaxRetry(3))
	for desc, id := range map[string]string{
		"options in another order": register("*/5 * * * *", task, asynq.MaxRetry(3), asynq.Queue("q")),
		"another queue":            register("*/5 * * * *", task, asynq.Queue("q2")),
		"headers":                  register("*/5 * * * *", asynq.NewTaskWithHeaders("report", []byte("p"), map[string]string{"h": "1"})),
	} {
		if id != base {
			t.Errorf("%s: got id %q, want %q", desc, id, base)
		}
	}
	seen := map[string]string{base: "base"}
	for desc, id := range map[string]string{
		"spec":    register("*/10 * * * *", task),
		"type":    register("*/5 * * * *", asynq.NewTask("report2", []byte("p"))),
		"payload": register("*/5 * * * *", asynq.NewTask("report", []byte("p2"))),
	} {
		if other, dup := seen[id]; dup {
			t.Errorf("a different %s: got the id of %s (%q)", desc, other, id)
		}
		seen[id] = desc
	}
	if id := register("0 9 * * *", task, asynqlock.EntryName("daily-report")); id != "daily-report" {
		t.Errorf("EntryName: got id %q, want daily-report", id)
	}
	s := newS()
	if _, err := s.Register("*/5 * * * *", task, asynq.Queue("q")); err != nil {
		t.Fatal(err)
	}
	if id, err := s.Register("*/5 * * * *", task, asynq.Queue("q")); err != nil || id != base {
		t.Errorf("the same entry again: got %q, %v, want %q", id, err, base)
	}
	if _, err := s.Register("*/5 * * * *", task, asynq.Queue("q2")); lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), "EntryName") {
		t.Errorf("another entry with the same id: got %v, want an InvalidArgument error saying to name them", err)
	}
}

// ticks collects what OnTick reports.
type ticks struct {
	mu  sync.Mutex
	all []asynqlock.Tick
}

func (k *ticks) add(tk asynqlock.Tick) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.all = append(k.all, tk)
}

// wait returns the ticks once n of them satisfy match, failing the test
// after timeout.
func (k *ticks) wait(t *testing.T, n int, timeout time.Duration, match func(asynqlock.Tick) bool) []asynqlock.Tick {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		k.mu.Lock()
		var got []asynqlock.Tick
		for _, tk := range k.all {
			if match(tk) {
				got = append(got, tk)
			}
		}
		k.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d matching ticks within %v, want %d (all: %+v)", len(got), timeout, n, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runScheduler runs s until the test ends.
func runScheduler(t *testing.T, s *asynqlock.Scheduler) {
	t.Helper()
	runSchedulerIn(t, context.Background(), s)
}

// runSchedulerIn is runScheduler with a context derived from parent.
func runSchedulerIn(t *testing.T, parent context.Context, s *asynqlock.Scheduler) {
	t.Helper()
	ctx, cancel := context.WithCancel(parent)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// TestSchedulerTickIDs: each tick is enqueued under TickID(key, entry,
// scheduled time), with a retention of at least the catch-up window.
func TestSchedulerTickIDs(t *testing.T) {
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica-a", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Register("@every 1s", asynq.NewTask("tick", nil), asynq.Queue(e.queue))
	if err != nil {
		t.Fatal(err)
	}
	var got ticks
	s.OnTick(got.add)
	runScheduler(t, s)
	ok := got.wait(t, 3, 10*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil })
	for i, tk := range ok {
		if want := asynqlock.TickID("sched", id, tk.At); tk.TaskID != want || tk.EntryID != id {
			t.Errorf("tick %d: got task id %q of entry %q, want %q of %q", i, tk.TaskID, tk.EntryID, want, id)
		}
		if !tk.At.Equal(tk.At.Truncate(time.Second)) {
			t.Errorf("tick %d at %v: want a whole second", i, tk.At)
		}
		if i > 0 && tk.At.Sub(ok[i-1].At) != time.Second {
			t.Errorf("tick %d at %v after %v: want one second apart", i, tk.At, ok[i-1].At)
		}
		info, err := e.insp.GetTaskInfo(e.queue, tk.TaskID)
		if err != nil {
			t.Fatalf("tick %d: GetTaskInfo: %v", i, err)
		}
		if info.Retention < 4*time.Second { // TTL + two periods
			t.Errorf("tick %d: retention %v, want at least 4s", i, info.Retention)
		}
	}
}

// TestSchedulerEveryExact: "@every 1500ms" enqueues a tick every 1.5s, at
// the multiples of 1.5s since the epoch (robfig/cron would round it to 1s),
// each under its own task id.
func TestSchedulerEveryExact(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica-a", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const d = 1500 * time.Millisecond
	id, err := s.Register("@every 1500ms", asynq.NewTask("tick", nil), asynq.Queue(e.queue))
	if err != nil {
		t.Fatal(err)
	}
	var got ticks
	s.OnTick(got.add)
	runScheduler(t, s)
	ok := got.wait(t, 3, 20*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil })
	for i, tk := range ok {
		if tk.At.UnixNano()%int64(d) != 0 {
			t.Errorf("tick %d at %v: want a multiple of %v since the epoch", i, tk.At.Format(time.StampMilli), d)
		}
		if i > 0 && tk.At.Sub(ok[i-1].At) != d {
			t.Errorf("tick %d at %v after %v: want %v apart", i, tk.At.Format(time.StampMilli), ok[i-1].At.Format(time.StampMilli), d)
		}
		if want := asynqlock.TickID("sched", id, tk.At); tk.TaskID != want {
			t.Errorf("tick %d: task id %q, want %q", i, tk.TaskID, want)
		}
		if n := tickCount(t, e, tk.TaskID); n != 1 {
			t.Errorf("tick %d: %d tasks with id %s, want 1", i, n, tk.TaskID)
		}
	}
}

// TestSchedulerConflictIsEnqueued: a tick whose task id asynq already
// holds counts as enqueued: reported with asynq.ErrTaskIDConflict, not
// tried again, and the next ticks go on.
func TestSchedulerConflictIsEnqueued(t *testing.T) {
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica-a", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Register("@every 1s", asynq.NewTask("tick", nil), asynq.Queue(e.queue))
	if err != nil {
		t.Fatal(err)
	}
	// An earlier term enqueued the current tick and the next two.
	now := time.Now().Truncate(time.Second)
	taken := map[string]bool{}
	for i := range 3 {
		tid := asynqlock.TickID("sched", id, now.Add(time.Duration(i)*time.Second))
		if _, err := e.client.Enqueue(asynq.NewTask("tick", nil), asynq.Queue(e.queue), asynq.TaskID(tid)); err != nil {
			t.Fatal(err)
		}
		taken[tid] = true
	}
	var got ticks
	s.OnTick(got.add)
	runScheduler(t, s)
	got.wait(t, 2, 10*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil })
	got.mu.Lock()
	defer got.mu.Unlock()
	conflicts := map[string]int{}
	for _, tk := range got.all {
		switch {
		case errors.Is(tk.Err, asynq.ErrTaskIDConflict):
			if conflicts[tk.TaskID]++; conflicts[tk.TaskID] > 1 {
				t.Errorf("tick %v: tried again after a conflict", tk.At)
			}
			if !taken[tk.TaskID] {
				t.Errorf("tick %v: conflict on a task id nobody took", tk.At)
			}
		case tk.Err != nil:
			t.Errorf("tick %v: %v", tk.At, tk.Err)
		case taken[tk.TaskID]:
			t.Errorf("tick %v: enqueued although its task id was taken", tk.At)
		}
	}
	if len(conflicts) == 0 {
		t.Errorf("no tick reported asynq.ErrTaskIDConflict (ticks: %+v)", got.all)
	}
	for tid := range taken {
		if n := tickCount(t, e, tid); n != 1 {
			t.Errorf("task %s: %d in the queue, want 1", tid, n)
		}
	}
}

// tickCount counts the pending tasks with id tid.
func tickCount(t *testing.T, e *env, tid string) int {
	t.Helper()
	tasks, err := e.insp.ListPendingTasks(e.queue, asynq.PageSize(1000))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ti := range tasks {
		if ti.ID == tid {
			n++
		}
	}
	return n
}

// believer is a backend whose heartbeat never finds a lease gone, like a
// leader that woke from a stall before its heartbeat ran: only the term
// check before each enqueue can tell that the term is over.
type believer struct {
	lock.Recorder
	mu    sync.Mutex
	lease lock.Lease // the last granted
}

func (b *believer) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	l, err := b.Recorder.Acquire(ctx, key, ttl)
	if err == nil && key == "sched" { // the term, not an entry's lease
		b.mu.Lock()
		b.lease = l
		b.mu.Unlock()
	}
	return l, err
}

func (b *believer) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	b.mu.Lock()
	term := id == b.lease.ID
	b.mu.Unlock()
	if !term { // an entry's lease
		return b.Recorder.Extend(ctx, id, ttl)
	}
	return time.Now().Add(ttl), nil
}

// TestSchedulerChecksTheTerm: once the term's lease is gone from the
// backend, the term enqueues nothing more, even though its context lives
// on; the next term (a higher fence) goes on.
func TestSchedulerChecksTheTerm(t *testing.T) {
	e := newEnv(t)
	b := &believer{Recorder: e.backend}
	s, err := asynqlock.NewScheduler(e.client, b, "sched", "replica-a", election.WithTTL(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register("@every 1s", asynq.NewTask("tick", nil), asynq.Queue(e.queue)); err != nil {
		t.Fatal(err)
	}
	var got ticks
	s.OnTick(got.add)
	runScheduler(t, s)
	first := got.wait(t, 1, 10*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil })[0].Fence
	b.mu.Lock()
	old := b.lease
	b.mu.Unlock()
	if err := e.backend.Release(context.Background(), old.ID); err != nil { // behind the term's back
		t.Fatal(err)
	}
	released := time.Now()
	got.wait(t, 2, 10*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil && tk.Fence.Compare(first) > 0 })
	got.mu.Lock()
	defer got.mu.Unlock()
	for _, tk := range got.all {
		if tk.Fence == first && tk.Err == nil && tk.At.After(released.Add(time.Second)) {
			t.Errorf("the %v tick was enqueued by term %s after its lease was released", tk.At, tk.Fence)
		}
	}
}

// TestSchedulerRunOnce: a second Run while one runs fails at once; Run
// returns nil when its context ends, and can run again after.
func TestSchedulerRunOnce(t *testing.T) {
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register("@every 1s", asynq.NewTask("tick", nil), asynq.Queue(e.queue)); err != nil {
		t.Fatal(err)
	}
	var got ticks
	s.OnTick(got.add)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	got.wait(t, 1, 10*time.Second, func(asynqlock.Tick) bool { return true }) // the first Run leads
	second, cancelSecond := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelSecond()
	if err := s.Run(second); lock.CodeOf(err) != lock.CodeInvalidArgument || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second Run: got %v, want an error saying it is already running", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after its context ended: got %v, want nil", err)
	}
	ended, cancelEnded := context.WithCancel(context.Background())
	cancelEnded()
	if err := s.Run(ended); err != nil {
		t.Errorf("Run again with an ended context: got %v, want nil", err)
	}
}

// TestSchedulerTickCarriesTraceContext: a tick's task is enqueued through
// Enqueue: it carries the trace context of the Scheduler's context in its
// headers (the global propagator, W3C in these tests), and keeps the
// entry task's own headers and options.
func TestSchedulerTickCarriesTraceContext(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica-a", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	task := asynq.NewTaskWithHeaders("tick", nil, map[string]string{"x-own": "kept"}, asynq.MaxRetry(7))
	if _, err := s.Register("@every 1s", task, asynq.Queue(e.queue)); err != nil {
		t.Fatal(err)
	}
	var got ticks
	s.OnTick(got.add)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
		SpanID:     trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
		TraceFlags: trace.FlagsSampled, Remote: true})
	runSchedulerIn(t, trace.ContextWithRemoteSpanContext(context.Background(), sc), s)
	tk := got.wait(t, 1, 10*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil })[0]
	info, err := e.insp.GetTaskInfo(e.queue, tk.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if tp := info.Headers["traceparent"]; !strings.Contains(tp, sc.TraceID().String()) {
		t.Errorf("tick's task traceparent = %q, want the Scheduler context's trace %s", tp, sc.TraceID())
	}
	if info.Headers["x-own"] != "kept" || info.MaxRetry != 7 {
		t.Errorf("tick's task headers %v, max retry %d: want the entry task's own header and MaxRetry(7)", info.Headers, info.MaxRetry)
	}
}
