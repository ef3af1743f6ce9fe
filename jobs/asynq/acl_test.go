package asynqlock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/acltest"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestACLWorker runs an asynq worker with asynqlock's middleware and a
// Scheduler as the worker's user of docs/acl.md, created with exactly its
// line: duplicate tasks run once (done markers), the Scheduler enqueues
// its ticks (which the worker runs), and no command, key or channel is refused to the user (ACL
// LOG), asynq's own included.
func TestACLWorker(t *testing.T) {
	srv := redistest.Start(t)
	opts := acltest.Create(t, srv, acltest.Worker)
	rc := redis.NewClient(opts)
	t.Cleanup(func() { _ = rc.Close() })
	b, err := redisbackend.New(rc, &redisbackend.Options{Prefix: acltest.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	g, err := asynqlock.New(b, asynqlock.WithTTL(time.Second), asynqlock.WithDoneTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	const queue = "acl"
	var runs, ticks atomic.Int32
	mux := asynq.NewServeMux()
	mux.Use(g.Middleware())
	mux.HandleFunc(taskType, func(ctx context.Context, _ *asynq.Task) error {
		runs.Add(1)
		time.Sleep(50 * time.Millisecond)
		return nil
	})
	mux.HandleFunc("tick", func(context.Context, *asynq.Task) error { return nil })
	worker := asynq.NewServerFromRedisClient(rc, asynq.Config{
		Concurrency: 4, Queues: map[string]int{queue: 1}, LogLevel: asynq.ErrorLevel,
		TaskCheckInterval: 50 * time.Millisecond, DelayedTaskCheckInterval: 50 * time.Millisecond,
		RetryDelayFunc: asynqlock.RetryDelay(quickRetry), IsFailure: asynqlock.IsFailure,
		ShutdownTimeout: 5 * time.Second,
	})
	if err := worker.Start(mux); err != nil {
		t.Fatalf("asynq server: %v", err)
	}
	client := asynq.NewClientFromRedisClient(rc)
	for range 10 {
		if _, err := client.Enqueue(asynq.NewTask(taskType, []byte(`{"report":7}`)), asynq.Queue(queue)); err != nil {
			t.Fatalf("enqueue: %v", err)
		}
	}
	s, err := asynqlock.NewScheduler(client, b, "sched", "replica-a", election.WithTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register("@every 1s", asynq.NewTask("tick", nil), asynq.Queue(queue)); err != nil {
		t.Fatal(err)
	}
	s.OnTick(func(tk asynqlock.Tick) {
		if tk.Err == nil {
			ticks.Add(1)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	deadline := time.Now().Add(20 * time.Second)
	for (runs.Load() < 1 || ticks.Load() < 2) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // the duplicates' turns
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Scheduler.Run: %v", err)
	}
	worker.Shutdown()
	if runs.Load() != 1 || ticks.Load() < 2 {
		t.Errorf("%d runs of the duplicated task, %d ticks enqueued; want 1 run and 2 ticks at least", runs.Load(), ticks.Load())
	}
	acltest.NoDenials(t, srv, acltest.Worker)
}

// TestACLUnique enqueues unique tasks and runs them as the worker's user
// of docs/acl.md: the producer's key, record and asynq look-ups, and the
// Guard's hold of the key, need no command, key or channel it lacks.
func TestACLUnique(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(acltest.Create(t, srv, acltest.Worker))
	t.Cleanup(func() { _ = rc.Close() })
	b, err := redisbackend.New(rc, &redisbackend.Options{Prefix: acltest.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	g, err := asynqlock.New(b, asynqlock.WithTTL(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const queue = "acl"
	worker := asynq.NewServerFromRedisClient(rc, asynq.Config{
		Concurrency: 2, Queues: map[string]int{queue: 1}, LogLevel: asynq.ErrorLevel,
		TaskCheckInterval: 50 * time.Millisecond, ShutdownTimeout: 5 * time.Second,
	})
	started := make(chan struct{}, 2)
	if err := worker.Start(g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		started <- struct{}{}
		time.Sleep(200 * time.Millisecond)
		return nil
	}))); err != nil {
		t.Fatalf("asynq server: %v", err)
	}
	t.Cleanup(worker.Shutdown)
	client, insp := asynq.NewClientFromRedisClient(rc), asynq.NewInspectorFromRedisClient(rc)
	enqueue := func() error {
		_, err := asynqlock.Enqueue(context.Background(), client, asynq.NewTask(taskType, []byte("acl")),
			asynqlock.TaskOptions(asynq.Queue(queue)), asynqlock.UniqueUntilDone(b, insp))
		return err
	}
	if err := enqueue(); err != nil {
		t.Fatal(err)
	}
	<-started
	if err := enqueue(); !errors.Is(err, asynqlock.ErrDuplicateTask) {
		t.Errorf("enqueue while it runs: %v, want a duplicate", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for err := enqueue(); err != nil; err = enqueue() {
		if !errors.Is(err, asynqlock.ErrDuplicateTask) || time.Now().After(deadline) {
			t.Fatalf("enqueue after it ran: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	<-started
	acltest.NoDenials(t, srv, acltest.Worker)
}
