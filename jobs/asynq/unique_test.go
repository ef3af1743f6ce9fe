package asynqlock_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// enqueueUnique enqueues a task of payload on e's queue with
// UniqueUntilDone on e's backend.
func (e *env) enqueueUnique(payload string, opts ...asynqlock.UniqueOption) (*asynq.TaskInfo, error) {
	return asynqlock.Enqueue(context.Background(), e.client, asynq.NewTask(taskType, []byte(payload)),
		asynqlock.TaskOptions(asynq.Queue(e.queue)), asynqlock.UniqueUntilDone(e.backend, e.insp, opts...))
}

// mustEnqueueUnique is enqueueUnique that fails the test on an error.
func (e *env) mustEnqueueUnique(t *testing.T, payload string, opts ...asynqlock.UniqueOption) *asynq.TaskInfo {
	t.Helper()
	info, err := e.enqueueUnique(payload, opts...)
	if err != nil {
		t.Fatalf("unique enqueue: %v", err)
	}
	return info
}

// refused checks that a unique enqueue of payload is refused as a
// duplicate of the task id.
func (e *env) refused(t *testing.T, payload, id string, opts ...asynqlock.UniqueOption) {
	t.Helper()
	info, err := e.enqueueUnique(payload, opts...)
	var dup *asynqlock.DuplicateTaskError
	if !errors.Is(err, asynqlock.ErrDuplicateTask) || !errors.As(err, &dup) {
		t.Fatalf("unique enqueue: info %v, err %v; want a *DuplicateTaskError", info, err)
	}
	if dup.TaskID != id || dup.Queue != e.queue {
		t.Fatalf("duplicate of task %q in %q, want %q in %q", dup.TaskID, dup.Queue, id, e.queue)
	}
}

// TestUniqueRace: of producers racing on one key, one enqueues and the
// others are refused with its task id; also while a worker takes the
// task at once (its Guard waits for the key while the producers decide).
func TestUniqueRace(t *testing.T) {
	t.Parallel()
	for _, served := range []bool{false, true} {
		t.Run("served="+strconv.FormatBool(served), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if served {
				// Each task runs until the test ends: one that finished
				// during its race would rightly free its key.
				end := make(chan struct{})
				e.serve(t, e.guard(t), func(context.Context, *asynq.Task) error {
					<-end
					return nil
				}, asynq.Config{})
				t.Cleanup(func() { close(end) }) // before the server's shutdown
			}
			for round := range 5 {
				raceRound(t, e, "race-"+strconv.Itoa(round))
			}
		})
	}
}

// raceRound has 8 producers, each with clients of its own, enqueue
// payload at once, and checks that exactly one did.
func raceRound(t *testing.T, e *env, payload string) {
	t.Helper()
	producers := make([]uniqueProducer, 8)
	for i := range producers {
		producers[i] = newUniqueProducer(t, e.redis.Client(t), e.backend.Prefix())
	}
	race(t, producers, e.queue, payload)
}

// uniqueProducer enqueues unique tasks through a lock backend, an asynq
// client and an inspector of its own on a Redis client of its own, as
// another instance of a service would.
type uniqueProducer struct {
	b    *redisbackend.Backend
	c    *asynq.Client
	insp *asynq.Inspector
}

// newUniqueProducer is a producer on rc, its lock keys under prefix.
func newUniqueProducer(t testing.TB, rc redis.UniversalClient, prefix string) uniqueProducer {
	t.Helper()
	b, err := redisbackend.New(rc, &redisbackend.Options{Prefix: prefix, DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	return uniqueProducer{b: b, c: asynq.NewClientFromRedisClient(rc), insp: asynq.NewInspectorFromRedisClient(rc)}
}

// enqueue enqueues a task of payload on queue with UniqueUntilDone.
func (p uniqueProducer) enqueue(ctx context.Context, queue, payload string, taskOpts []asynq.Option, opts ...asynqlock.UniqueOption) (*asynq.TaskInfo, error) {
	return asynqlock.Enqueue(ctx, p.c, asynq.NewTask(taskType, []byte(payload)),
		asynqlock.TaskOptions(append([]asynq.Option{asynq.Queue(queue)}, taskOpts...)...), asynqlock.UniqueUntilDone(p.b, p.insp, opts...))
}

// race has the producers enqueue payload on queue at once with opts,
// checks that exactly one did and that the others were refused with its
// task id, and returns that id.
func race(t *testing.T, producers []uniqueProducer, queue, payload string, opts ...asynqlock.UniqueOption) string {
	t.Helper()
	var wg sync.WaitGroup
	infos := make([]*asynq.TaskInfo, len(producers))
	errs := make([]error, len(producers))
	start := make(chan struct{})
	for i, p := range producers {
		wg.Go(func() {
			<-start
			infos[i], errs[i] = p.enqueue(context.Background(), queue, payload, nil, opts...)
		})
	}
	close(start)
	wg.Wait()
	var won []string
	for i, err := range errs {
		if err == nil {
			won = append(won, infos[i].ID)
		}
	}
	if len(won) != 1 {
		t.Fatalf("%s: %d producers enqueued %v (errors %v), want 1", payload, len(won), won, errs)
	}
	for _, err := range errs {
		var dup *asynqlock.DuplicateTaskError
		if err != nil && (!errors.As(err, &dup) || dup.TaskID != won[0] || dup.Queue != queue) {
			t.Errorf("%s: a loser's error %v, want a duplicate of %s in %s", payload, err, won[0], queue)
		}
	}
	return won[0]
}

func TestUniqueFreesWhenTaskEnds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		desc string
		end  func(t *testing.T, e *env, id string)
	}{
		{"deleted through the Inspector", func(t *testing.T, e *env, id string) {
			if err := e.insp.DeleteTask(e.queue, id); err != nil {
				t.Fatal(err)
			}
		}},
		{"archived through the Inspector", func(t *testing.T, e *env, id string) {
			if err := e.insp.ArchiveTask(e.queue, id); err != nil {
				t.Fatal(err)
			}
		}},
		{"succeeded", func(t *testing.T, e *env, id string) {
			e.serve(t, e.guard(t), func(ctx context.Context, task *asynq.Task) error {
				if tid, _ := asynq.GetTaskID(ctx); tid != id && string(task.Payload()) == "p" {
					time.Sleep(time.Second) // the next one runs while the test checks it
				}
				return nil
			}, asynq.Config{})
			e.waitQueue(t, 10*time.Second, "task done", func(qi *asynq.QueueInfo) bool { return drained(qi) && qi.Processed == 2 })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			first := e.mustEnqueueUnique(t, "p")
			e.refused(t, "p", first.ID)
			e.mustEnqueueUnique(t, "other") // another payload, another key
			tt.end(t, e, first.ID)
			second := e.mustEnqueueUnique(t, "p")
			if second.ID == first.ID {
				t.Errorf("second task id %q, want a new one", second.ID)
			}
			e.refused(t, "p", second.ID)
		})
	}
}

// TestUniqueRetryThenArchive follows one task through a failed attempt,
// its retry, and its archiving after the last retry: the key stays taken
// while it runs and while it waits for its retry, and frees when asynq
// archives it.
func TestUniqueRetryThenArchive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	running, proceed := make(chan int), make(chan struct{})
	// asynq calls the ErrorHandler after the handler and the Guard return
	// and before it moves the task to retry: the window in which only the
	// key's record of the failed attempt keeps the key taken.
	afterFailure := make(chan error, 2)
	onError := asynq.ErrorHandlerFunc(func(ctx context.Context, _ *asynq.Task, _ error) {
		if n, _ := asynq.GetRetryCount(ctx); n == 0 {
			_, err := e.enqueueUnique("r")
			afterFailure <- err
		}
	})
	var finished atomic.Bool
	e.serve(t, e.guard(t), func(ctx context.Context, _ *asynq.Task) error {
		if finished.Load() {
			return nil
		}
		n, _ := asynq.GetRetryCount(ctx)
		running <- n
		<-proceed
		return errors.New("boom")
	}, asynq.Config{ErrorHandler: onError,
		// Long enough for the test to see the task waiting in retry.
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return 2 * time.Second }})
	info, err := asynqlock.Enqueue(context.Background(), e.client, asynq.NewTask(taskType, []byte("r")),
		asynqlock.TaskOptions(asynq.Queue(e.queue), asynq.MaxRetry(1)), asynqlock.UniqueUntilDone(e.backend, e.insp))
	if err != nil {
		t.Fatal(err)
	}
	for attempt := range 2 {
		if n := <-running; n != attempt {
			t.Fatalf("attempt with retry count %d, want %d", n, attempt)
		}
		e.refused(t, "r", info.ID) // running
		proceed <- struct{}{}
		if attempt == 0 {
			var dup *asynqlock.DuplicateTaskError
			if err := <-afterFailure; !errors.As(err, &dup) || dup.TaskID != info.ID {
				t.Fatalf("enqueue after the first attempt failed: %v, want a duplicate of %s", err, info.ID)
			}
			e.waitQueue(t, 5*time.Second, "task in retry", func(qi *asynq.QueueInfo) bool { return qi.Retry == 1 })
			e.refused(t, "r", info.ID) // waiting for its retry
		}
	}
	e.waitQueue(t, 5*time.Second, "task archived", func(qi *asynq.QueueInfo) bool { return qi.Archived == 1 })
	finished.Store(true)
	e.mustEnqueueUnique(t, "r")
}

// TestUniqueSupersededDropped: a task taken for dead, whose key now
// records another task, is dropped by the Guard when asynq delivers it
// after all (here it comes back from the archive).
func TestUniqueSupersededDropped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	old := e.mustEnqueueUnique(t, "s")
	if err := e.insp.ArchiveTask(e.queue, old.ID); err != nil {
		t.Fatal(err)
	}
	repl := e.mustEnqueueUnique(t, "s")
	if err := e.insp.RunTask(e.queue, old.ID); err != nil {
		t.Fatal(err)
	}
	r := newRuns()
	errs := &errorLog{}
	// Both tasks have one dedup key too: a short TTL brings back soon the
	// one that found the other's Guard running.
	e.serve(t, e.guard(t, asynqlock.WithTTL(time.Second)), func(ctx context.Context, _ *asynq.Task) error {
		r.enter(ctx)()
		return nil
	}, asynq.Config{ErrorHandler: errs, IsFailure: asynqlock.IsFailure, RetryDelayFunc: asynqlock.RetryDelay(quickRetry)})
	e.waitQueue(t, 10*time.Second, "both delivered", drained)
	spans := r.byTask()
	if len(spans) != 1 || len(spans[repl.ID]) != 1 {
		t.Errorf("runs by task %v, want one run of %s", spans, repl.ID)
	}
	superseded := func(err error) bool {
		var d *asynqlock.DuplicateError
		return errors.As(err, &d) && d.Superseded && errors.Is(err, asynq.RevokeTask)
	}
	if n := errs.count(superseded); n != 1 {
		t.Errorf("task errors %v, want one superseded duplicate, revoked", errs.all())
	}
}

func TestUniqueRedisRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.WithAOF())
	e := newEnvOn(t, srv)
	first := e.mustEnqueueUnique(t, "p")
	srv.Restart(t)
	e.refused(t, "p", first.ID) // the record and the task survived
	if err := e.insp.DeleteTask(e.queue, first.ID); err != nil {
		t.Fatal(err)
	}
	e.mustEnqueueUnique(t, "p")
}

func TestUniqueBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	task := asynq.NewTask(taskType, []byte("bad"))
	q := asynqlock.TaskOptions(asynq.Queue(e.queue))
	tests := []struct {
		desc   string
		client *asynq.Client
		task   *asynq.Task
		opts   []asynqlock.EnqueueOption
	}{
		{"nil client", nil, task, []asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(e.backend, e.insp)}},
		{"nil task", e.client, nil, []asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(e.backend, e.insp)}},
		{"nil backend", e.client, task, []asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(nil, e.insp)}},
		{"nil inspector", e.client, task, []asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(e.backend, nil)}},
		{"not a Recorder", e.client, task, []asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(plainBackend{e.backend}, e.insp)}},
		{"empty key", e.client, task, []asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(e.backend, e.insp, asynqlock.UniqueKey(""))}},
		{"invalid key", e.client, task, []asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(e.backend, e.insp, asynqlock.UniqueKey("a\xff"))}},
		{"backstop under the lease", e.client, task, []asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(e.backend, e.insp,
			asynqlock.UniqueLease(time.Minute), asynqlock.UniqueBackstop(30*time.Second))}},
		{"asynq.Unique beside it", e.client, task, []asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(e.backend, e.insp),
			asynqlock.TaskOptions(asynq.Unique(time.Hour))}},
		{"asynq.Unique in the task", e.client, asynq.NewTask(taskType, nil, asynq.Unique(time.Hour)),
			[]asynqlock.EnqueueOption{asynqlock.UniqueUntilDone(e.backend, e.insp)}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			_, err := asynqlock.Enqueue(context.Background(), tt.client, tt.task, append(tt.opts, q)...)
			if got := lock.CodeOf(err); got != lock.CodeInvalidArgument {
				t.Errorf("error %v (code %q), want InvalidArgument", err, got)
			}
		})
	}
	if qi, err := e.insp.GetQueueInfo(e.queue); err == nil && qi.Size != 0 {
		t.Errorf("queue size %d after bad input, want 0", qi.Size)
	}
}

// plainBackend hides every extension of its Backend.
type plainBackend struct{ lock.Backend }

// TestUniqueWorkerKilled kills the worker process running a unique task:
// the key stays taken until the Guard's lease on it lapses, then frees.
func TestUniqueWorkerKilled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	lease := asynqlock.UniqueLease(time.Second)
	first := e.mustEnqueueUnique(t, "k", lease)
	c, lines := startUniqueWorker(t, e, "block")
	if line := <-lines; line != "start "+first.ID+" k" {
		t.Fatalf("worker said %q, want %q", line, "start "+first.ID+" k")
	}
	time.Sleep(1500 * time.Millisecond) // past the lease: the worker's heartbeat keeps it
	e.refused(t, "k", first.ID, lease)
	if err := c.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := e.enqueueUnique("k", lease)
		if err == nil {
			if info.ID == first.ID {
				t.Fatalf("enqueued task id %q again", info.ID)
			}
			break
		}
		if !errors.Is(err, asynqlock.ErrDuplicateTask) || time.Now().After(deadline) {
			t.Fatalf("enqueue after the worker died: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if qi, err := e.insp.GetQueueInfo(e.queue); err != nil || qi.Active != 1 || qi.Pending != 1 {
		t.Errorf("queue %+v (%v): want the dead worker's task active and its successor pending", qi, err)
	}
}

// TestUniqueSchedulerEntry: an entry with UniqueEntry enqueues no tick
// while its previous tick's task is alive, and enqueues again once it is
// gone.
func TestUniqueSchedulerEntry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, err := asynqlock.NewScheduler(e.client, e.backend, "sched", "replica-a", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var got ticks
	s.OnTick(got.add)
	if _, err := s.Register("@every 1s", asynq.NewTask(taskType, []byte("tick")), asynq.Queue(e.queue),
		asynqlock.UniqueEntry(e.backend, e.insp)); err != nil {
		t.Fatal(err)
	}
	startScheduler(t, s)
	dup := func(tk asynqlock.Tick) bool { return errors.Is(tk.Err, asynqlock.ErrDuplicateTask) }
	got.wait(t, 1, 10*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil })
	got.wait(t, 1, 10*time.Second, dup)
	qi, err := e.insp.GetQueueInfo(e.queue)
	if err != nil || qi.Pending != 1 {
		t.Fatalf("queue %+v (%v), want 1 pending task", qi, err)
	}
	tasks, err := e.insp.ListPendingTasks(e.queue)
	if err != nil || len(tasks) != 1 {
		t.Fatalf("pending tasks %v (%v)", tasks, err)
	}
	if err := e.insp.DeleteTask(e.queue, tasks[0].ID); err != nil {
		t.Fatal(err)
	}
	got.wait(t, 2, 10*time.Second, func(tk asynqlock.Tick) bool { return tk.Err == nil })
	if _, err := s.Register("@every 1s", asynq.NewTask(taskType, []byte("bad")), asynqlock.UniqueEntry(nil, e.insp)); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("Register with a bad UniqueEntry: %v, want InvalidArgument", err)
	}
}

// TestUniqueRunPastBackstop: a task that runs longer than the backstop
// outlives its record; its Guard still holds the key, so an enqueue is
// refused as a duplicate of a running task, with no id to give.
func TestUniqueRunPastBackstop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	opts := []asynqlock.UniqueOption{asynqlock.UniqueLease(time.Second), asynqlock.UniqueBackstop(time.Second)}
	started, end := make(chan struct{}), make(chan struct{})
	e.serve(t, e.guard(t), func(context.Context, *asynq.Task) error {
		close(started)
		<-end
		return nil
	}, asynq.Config{})
	t.Cleanup(func() { close(end) })
	e.mustEnqueueUnique(t, "long", opts...)
	<-started
	time.Sleep(1500 * time.Millisecond) // past the backstop
	_, err := e.enqueueUnique("long", opts...)
	var dup *asynqlock.DuplicateTaskError
	if !errors.As(err, &dup) || dup.TaskID != "" || dup.Queue != e.queue {
		t.Errorf("enqueue: %v, want a duplicate of a running task with no id", err)
	}
}

// TestUniqueBackstopFromDue: the backstop counts from when a scheduled
// task is due, so a short one does not free the key of a task that waits.
func TestUniqueBackstopFromDue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	unique := asynqlock.UniqueUntilDone(e.backend, e.insp, asynqlock.UniqueLease(time.Second), asynqlock.UniqueBackstop(time.Second))
	enqueue := func() (*asynq.TaskInfo, error) {
		return asynqlock.Enqueue(context.Background(), e.client, asynq.NewTask(taskType, []byte("later")),
			asynqlock.TaskOptions(asynq.Queue(e.queue), asynq.ProcessIn(time.Minute)), unique)
	}
	// A first task, deleted: the key's next task is its second (the id
	// sequence alone would find the first one again).
	gone, err := enqueue()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.insp.DeleteTask(e.queue, gone.ID); err != nil {
		t.Fatal(err)
	}
	first, err := enqueue()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond) // past the backstop, long before the task is due
	var dup *asynqlock.DuplicateTaskError
	if _, err := enqueue(); !errors.As(err, &dup) || dup.TaskID != first.ID {
		t.Errorf("enqueue: %v, want a duplicate of %s, scheduled", err, first.ID)
	}
}

// TestUniqueHeldPastWait: a producer finds the key held with no record (a
// producer deciding), waits, and the key passes to a Guard queued before it
// once the deciding producer has written its task's record: the refusal
// names that task, read after the wait.
func TestUniqueHeldPastWait(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	var rec lock.Recorder = e.backend
	// A live task and its record, on another key, to stand for the
	// deciding producer's.
	live, err := asynqlock.Enqueue(ctx, e.client, asynq.NewTask(taskType, []byte("live")),
		asynqlock.TaskOptions(asynq.Queue(e.queue)), asynqlock.UniqueUntilDone(e.backend, e.insp, asynqlock.UniqueKey("other")))
	if err != nil {
		t.Fatal(err)
	}
	record, ok, err := rec.Record(ctx, asynqlock.UniquePrefix+"other")
	if err != nil || !ok {
		t.Fatalf("the other key's record: %v, %v", ok, err)
	}
	key := asynqlock.UniquePrefix + "held"
	deciding, err := lock.Acquire(ctx, e.backend, key, lock.WithTTL(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	guardHolds := make(chan lock.Lease, 1)
	go func() { // the Guard, queued first
		l, err := lock.Acquire(ctx, e.backend, key, lock.WithTTL(10*time.Second), lock.WithWait(5*time.Second))
		if err != nil {
			t.Error(err)
		}
		guardHolds <- l
	}()
	time.Sleep(300 * time.Millisecond) // the Guard joins the queue before the producer
	refused := make(chan error, 1)
	go func() {
		_, err := asynqlock.Enqueue(ctx, e.client, asynq.NewTask(taskType, []byte("held")),
			asynqlock.TaskOptions(asynq.Queue(e.queue)), asynqlock.UniqueUntilDone(e.backend, e.insp, asynqlock.UniqueKey("held")))
		refused <- err
	}()
	time.Sleep(300 * time.Millisecond) // the producer finds no record and waits
	if err := rec.ReleaseRecord(ctx, deciding, record, time.Minute); err != nil {
		t.Fatal(err)
	}
	l := <-guardHolds
	defer func() { _ = e.backend.Release(ctx, l.ID) }()
	var dup *asynqlock.DuplicateTaskError
	if err := <-refused; !errors.As(err, &dup) || dup.TaskID != live.ID {
		t.Fatalf("enqueue: %v, want a duplicate of %s", err, live.ID)
	}
}

// TestUniqueStaleOrphanMark: a producer marks a task found running before
// its Guard took the key (asynq had just delivered it); the Guard then
// runs it, and its lease on the key lapses a lease after the mark, as
// under a stalled worker or Redis. The next enqueue does not take the task
// for dead at once on the old mark: it marks it again and is refused, and
// takes it for dead only a lease later.
func TestUniqueStaleOrphanMark(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	opts := []asynqlock.UniqueOption{asynqlock.UniqueKey("stale"), asynqlock.UniqueLease(time.Second)}
	gate, started, end := make(chan struct{}), make(chan struct{}, 1), make(chan struct{})
	mux := asynq.NewServeMux()
	mux.Use(func(next asynq.Handler) asynq.Handler { // delivered, and no Guard yet
		return asynq.HandlerFunc(func(ctx context.Context, task *asynq.Task) error {
			<-gate
			return next.ProcessTask(ctx, task)
		})
	}, e.guard(t).Middleware())
	mux.HandleFunc(taskType, func(context.Context, *asynq.Task) error {
		started <- struct{}{}
		<-end // a stalled worker: it does not see its lease lapse
		return nil
	})
	srv := asynq.NewServerFromRedisClient(e.asynqRC, asynq.Config{Queues: map[string]int{e.queue: 1},
		TaskCheckInterval: 50 * time.Millisecond, LogLevel: asynq.FatalLevel, ShutdownTimeout: time.Second})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	t.Cleanup(func() { close(end) })
	first := e.mustEnqueueUnique(t, "s", opts...)
	e.waitQueue(t, 5*time.Second, "task active", func(qi *asynq.QueueInfo) bool { return qi.Active == 1 })
	e.refused(t, "s", first.ID, opts...) // marks it
	close(gate)
	<-started
	time.Sleep(1200 * time.Millisecond) // the mark is older than a lease; the Guard keeps its lease
	keys, err := admin.StorageKeys(e.backend, asynqlock.UniquePrefix+"stale")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.lockRC.Del(context.Background(), keys.Lock).Err(); err != nil { // the lease lapses
		t.Fatal(err)
	}
	e.refused(t, "s", first.ID, opts...)
	time.Sleep(1200 * time.Millisecond)
	if next, err := e.enqueueUnique("s", opts...); err != nil || next.ID == first.ID {
		t.Fatalf("enqueue a lease after the lapse was found: %v, %v; want a new task", next, err)
	}
}
