package asynqlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// Example wires a Guard into an asynq server: one run at a time per task
// key, duplicates requeued until the holder's lease ends, and repeats of a
// finished task dropped for ten minutes, without a log line each.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	// One key per distinct payload: striped fence counters keep Redis at
	// DefaultFenceStripes counters instead of one per payload, forever.
	backend, err := redisbackend.New(rdb, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		log.Fatal(err)
	}
	guard, err := asynqlock.New(backend,
		asynqlock.WithTTL(30*time.Second),
		asynqlock.WithDoneTTL(10*time.Minute),
	)
	if err != nil {
		log.Fatal(err)
	}

	mux := asynq.NewServeMux()
	mux.Use(guard.Middleware())
	mux.HandleFunc("report:build", func(ctx context.Context, t *asynq.Task) error {
		lease, _ := lock.LeaseFrom(ctx)
		// Pass lease.Fence with writes; stop when ctx is cancelled.
		_ = lease
		return nil
	})

	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		IsFailure:      asynqlock.IsFailure,       // a requeued duplicate is not a failure
		RetryDelayFunc: asynqlock.RetryDelay(nil), // and comes back when the key is free
		Logger:         guard.Logger(nil),         // no "revoke task" warning per dropped duplicate
	})
	if err := srv.Run(mux); err != nil {
		log.Fatal(err)
	}
}

// ExampleGuard_Wrap calls a wrapped handler the way asynq does: the second
// delivery of the same task is dropped, because the first one succeeded
// within the done TTL. The key is the default one: prefix, queue ("default"
// outside a server), type and the SHA-256 of the payload.
func ExampleGuard_Wrap() {
	backend, stop := embeddedBackend(&redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	defer stop()
	guard, err := asynqlock.New(backend, asynqlock.WithDoneTTL(time.Minute))
	if err != nil {
		log.Fatal(err)
	}
	h := guard.Wrap(asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		lease, _ := lock.LeaseFrom(ctx)
		fmt.Printf("building %s under %s\n", t.Payload(), lease.Key)
		// With striped fence counters a fence starts near the server's
		// time in milliseconds, and only grows for this key.
		_ = lease.Fence
		return nil
	}))

	task := asynq.NewTask("report:build", []byte("report-7"))
	for range 2 {
		err := h.ProcessTask(context.Background(), task)
		fmt.Println(err, asynqlock.IsDuplicate(err), errors.Is(err, asynq.RevokeTask))
	}
	// Output:
	// building report-7 under asynq:default:report:build:b5bedd9d5e6508c7dc35638a31c590c965a382033d9eea508a075c9ab4edcd32
	// <nil> false false
	// asynqlock: duplicate task: key already done; dropped true true
}

// ExampleWithLimit runs at most two report tasks at a time: with two
// running, a third waits for a slot (WithLimitWait, 5s by default) and
// runs as soon as one frees; a Guard that does not wait turns it away with
// a *LimitError (which asynq requeues, not as a failure, when the server
// uses IsFailure and RetryDelay). The key is the task type, under
// DefaultLimitPrefix.
func ExampleWithLimit() {
	backend, stop := embeddedBackend(nil)
	defer stop()
	guard, err := asynqlock.New(backend, asynqlock.WithLimit(2))
	if err != nil {
		log.Fatal(err)
	}
	impatient, err := asynqlock.New(backend, asynqlock.WithLimit(2), asynqlock.WithLimitWait(0))
	if err != nil {
		log.Fatal(err)
	}
	running, finish := make(chan string), make(chan struct{})
	h := guard.Wrap(asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		lease, _ := lock.LeaseFrom(ctx) // a slot: an ordinary lease, with a fence
		running <- string(t.Payload()) + " under " + lease.Key
		<-finish
		return nil
	}))

	var wg sync.WaitGroup
	for _, report := range []string{"report-1", "report-2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = h.ProcessTask(context.Background(), asynq.NewTask("report:build", []byte(report)))
		}()
	}
	started := []string{<-running, <-running}
	slices.Sort(started)
	fmt.Println(strings.Join(started, "\n"))

	third := asynq.NewTask("report:build", []byte("report-3"))
	err = impatient.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })).
		ProcessTask(context.Background(), third)
	fmt.Println(asynqlock.IsLimited(err), asynqlock.IsFailure(err))

	result := make(chan error)
	// The third task waits for a slot; the two running tasks end, and a
	// slot goes to it.
	go func() { result <- h.ProcessTask(context.Background(), third) }()
	close(finish)
	fmt.Println(<-running)
	fmt.Println(<-result)
	wg.Wait()
	// Output:
	// report-1 under asynq-limit:report:build
	// report-2 under asynq-limit:report:build
	// true false
	// report-3 under asynq-limit:report:build
	// <nil>
}

// embeddedBackend returns a backend on an embedded Redis (miniredis) for
// the examples, and the function that stops it; a program passes its
// Redis client to redisbackend.New instead.
func embeddedBackend(o *redisbackend.Options) (*redisbackend.Backend, func()) {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	backend, err := redisbackend.New(rdb, o)
	if err != nil {
		log.Fatal(err)
	}
	return backend, func() {
		rdb.Close()
		mr.Close()
	}
}

// ExampleScheduler runs a Scheduler as every replica of a service would:
// it campaigns on its key and, while it leads, enqueues each tick of the
// entry once, under the tick's own task id.
func ExampleScheduler() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	backend, err := redisbackend.New(rdb, &redisbackend.Options{})
	if err != nil {
		log.Fatal(err)
	}
	client := asynq.NewClientFromRedisClient(rdb)
	s, err := asynqlock.NewScheduler(client, backend, "scheduler:reports", "replica-1", election.WithTTL(5*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	id, err := s.Register("@every 1s", asynq.NewTask("report:build", nil))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	s.OnTick(func(t asynqlock.Tick) {
		once.Do(func() {
			fmt.Println("enqueued:", t.Err == nil, "task id:", t.TaskID == asynqlock.TickID("scheduler:reports", id, t.At))
			cancel() // stop leading: the next replica in line takes over at once
		})
	})
	if err := s.Run(ctx); err != nil { // returns nil when ctx ends
		log.Fatal(err)
	}
	// Output: enqueued: true task id: true
}

// ExampleUniqueUntilDone enqueues a task that stays unique until it is
// done: a second enqueue of it is refused while the first waits, naming
// the first; once the first is gone (here deleted, as the CLI would),
// the next enqueue goes in.
func ExampleUniqueUntilDone() {
	mr, err := miniredis.Run() // a program uses its own Redis
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	// Striped fence counters: one key per distinct payload would otherwise
	// leave one counter in Redis per payload, forever.
	backend, err := redisbackend.New(rdb, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		log.Fatal(err)
	}
	client := asynq.NewClientFromRedisClient(rdb)
	insp := asynq.NewInspectorFromRedisClient(rdb)
	ctx := context.Background()

	// Workers run the task through a Guard on the same Redis, which holds
	// the key while it runs: mux.Use(guard.Middleware()).
	unique := asynqlock.UniqueUntilDone(backend, insp, asynqlock.UniqueBackstop(6*time.Hour))
	task := asynq.NewTask("invoice:send", []byte(`{"invoice":42}`))
	first, err := asynqlock.Enqueue(ctx, client, task, unique)
	if err != nil {
		log.Fatal(err)
	}
	_, err = asynqlock.Enqueue(ctx, client, task, unique)
	var dup *asynqlock.DuplicateTaskError
	fmt.Println(errors.Is(err, asynqlock.ErrDuplicateTask), errors.As(err, &dup) && dup.TaskID == first.ID)

	if err := insp.DeleteTask(first.Queue, first.ID); err != nil {
		log.Fatal(err)
	}
	second, err := asynqlock.Enqueue(ctx, client, task, unique)
	fmt.Println(err, second.ID != first.ID)
	// Output:
	// true true
	// <nil> true
}
