package asynqlock_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// env is one test's world on the shared redis-server: a lock backend on a
// client of its own (whose commands are counted), an asynq client and
// inspector on another, and a queue and lock prefix no other test uses.
type env struct {
	redis   *redistest.Server
	lockRC  *redis.Client
	cmds    *redistest.Counter
	backend *redisbackend.Backend
	asynqRC *redis.Client
	queue   string
	client  *asynq.Client
	insp    *asynq.Inspector
}

func newEnv(t testing.TB) *env {
	t.Helper()
	return newEnvOn(t, redistest.Shared(t))
}

// newEnvOn is newEnv on the server s.
func newEnvOn(t testing.TB, s *redistest.Server) *env {
	t.Helper()
	e := &env{redis: s, cmds: &redistest.Counter{}}
	e.lockRC = e.redis.Client(t)
	e.lockRC.AddHook(e.cmds)
	// No configuration record: tests count every command the backend sends.
	b, err := redisbackend.New(e.lockRC, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	e.backend = b
	e.asynqRC = e.redis.Client(t)
	e.queue = testQueue()
	e.client = asynq.NewClientFromRedisClient(e.asynqRC)
	e.insp = asynq.NewInspectorFromRedisClient(e.asynqRC)
	t.Cleanup(func() {
		// After the server's shutdown (cleanups run last-in first-out).
		_ = e.insp.DeleteQueue(e.queue, true)
	})
	return e
}

// testQueue is a queue name no other test uses.
func testQueue() string {
	var rnd [6]byte
	rand.Read(rnd[:])
	return "asynqlock-test-" + hex.EncodeToString(rnd[:])
}

// guard builds a Guard on the env's backend.
func (e *env) guard(t testing.TB, opts ...asynqlock.Option) *asynqlock.Guard {
	t.Helper()
	g, err := asynqlock.New(e.backend, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

// serve starts an asynq server on the env's queue (cfg's Queues when set)
// with small poll intervals, running h through g's middleware on a
// ServeMux; cfg's RetryDelayFunc, IsFailure, ErrorHandler and Logger are
// kept, and its LogLevel when set (else ErrorLevel). It is shut down in
// t.Cleanup.
func (e *env) serve(t *testing.T, g *asynqlock.Guard, h asynq.HandlerFunc, cfg asynq.Config) {
	t.Helper()
	serveOn(t, e.asynqRC, e.queue, g, h, cfg)
}

// serveOn is serve on the Redis client rc and queue.
func serveOn(t *testing.T, rc redis.UniversalClient, queue string, g *asynqlock.Guard, h asynq.HandlerFunc, cfg asynq.Config) {
	t.Helper()
	cfg.Concurrency = 10
	if cfg.Queues == nil {
		cfg.Queues = map[string]int{queue: 1}
	}
	cfg.TaskCheckInterval = 50 * time.Millisecond
	cfg.DelayedTaskCheckInterval = 50 * time.Millisecond
	if cfg.LogLevel == 0 { // unspecified
		cfg.LogLevel = asynq.ErrorLevel
	}
	cfg.ShutdownTimeout = 5 * time.Second
	mux := asynq.NewServeMux()
	mux.Use(g.Middleware())
	mux.Handle(taskType, h)
	srv := asynq.NewServerFromRedisClient(rc, cfg)
	if err := srv.Start(mux); err != nil {
		t.Fatalf("asynq server: %v", err)
	}
	t.Cleanup(srv.Shutdown)
}

const taskType = "report:build"

// enqueue puts n tasks with the same payload on the env's queue, under
// task ids prefix-0, prefix-1 ...
func (e *env) enqueue(t *testing.T, payload string, n int, idPrefix string) {
	t.Helper()
	for i := range n {
		_, err := e.client.Enqueue(asynq.NewTask(taskType, []byte(payload)),
			asynq.Queue(e.queue), asynq.TaskID(idPrefix+"-"+strconv.Itoa(i)))
		if err != nil {
			t.Fatalf("enqueue: %v", err)
		}
	}
}

// waitQueue polls the queue until cond holds, failing the test after
// timeout; it returns the last snapshot.
func (e *env) waitQueue(t testing.TB, timeout time.Duration, what string, cond func(*asynq.QueueInfo) bool) *asynq.QueueInfo {
	t.Helper()
	return waitQueueOn(t, e.insp, e.queue, timeout, what, cond)
}

// waitQueueOn is waitQueue on queue through insp.
func waitQueueOn(t testing.TB, insp *asynq.Inspector, queue string, timeout time.Duration, what string, cond func(*asynq.QueueInfo) bool) *asynq.QueueInfo {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		qi, err := insp.GetQueueInfo(queue)
		if err == nil && cond(qi) {
			return qi
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s: %s not reached within %v (last: %+v, err %v)", queue, what, timeout, qi, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// drained reports whether no task is waiting, running or due for retry.
func drained(qi *asynq.QueueInfo) bool {
	return qi.Pending+qi.Active+qi.Scheduled+qi.Retry+qi.Aggregating == 0
}

// runs records handler runs: how many, how many at once at most, and when
// each run of a task id started and ended.
type runs struct {
	active, maxActive, total atomic.Int64

	mu    sync.Mutex
	spans map[string][]span // by asynq task id
}

type span struct{ start, end time.Time }

func newRuns() *runs { return &runs{spans: map[string][]span{}} }

// enter marks the start of a run and returns the function that marks its
// end.
func (r *runs) enter(ctx context.Context) (exit func()) {
	id, _ := asynq.GetTaskID(ctx)
	start := time.Now()
	r.total.Add(1)
	n := r.active.Add(1)
	for {
		m := r.maxActive.Load()
		if n <= m || r.maxActive.CompareAndSwap(m, n) {
			break
		}
	}
	return func() {
		r.active.Add(-1)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.spans[id] = append(r.spans[id], span{start, time.Now()})
	}
}

// byTask returns the recorded spans per task id.
func (r *runs) byTask() map[string][]span {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]span, len(r.spans))
	for k, v := range r.spans {
		out[k] = append([]span(nil), v...)
	}
	return out
}

// errorLog is an asynq.ErrorHandler that sorts task errors.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) HandleError(_ context.Context, _ *asynq.Task, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errs = append(l.errs, err)
}

// count returns how many errors satisfy match.
func (l *errorLog) count(match func(error) bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, err := range l.errs {
		if match(err) {
			n++
		}
	}
	return n
}

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// busyDup and doneDup match the two kinds of duplicate.
func busyDup(err error) bool { return asynqlock.IsDuplicate(err) && !isDone(err) }
func doneDup(err error) bool { return asynqlock.IsDuplicate(err) && isDone(err) }

func isDone(err error) bool {
	var d *asynqlock.DuplicateError
	return errors.As(err, &d) && d.Done
}

// storageKey is the Redis key holding the lock of lease l on e's backend.
func (e *env) storageKey(t *testing.T, l lock.Lease) string {
	t.Helper()
	k, err := wire.MakeStorageKey(e.backend.Prefix(), l.Key, redisbackend.KeyBudget, redisbackend.KeyReserve)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
