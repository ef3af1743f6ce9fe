// Asynq shows asynqlock on asynq jobs, in three parts:
//
//  1. Duplicate jobs: "send invoice" tasks are enqueued several times each
//     and run through an asynqlock.Guard. Every invoice is sent exactly
//     once: duplicates that arrive while it is sent are requeued, those
//     that arrive after are dropped.
//  2. A limit: WithLimit(2) lets at most 2 report jobs run at once. The
//     others wait for a slot and get one as soon as it frees. It prints
//     the peak concurrency it saw.
//  3. A scheduler in every replica: three asynqlock.Schedulers run an
//     "@every 1s" entry. The leader stops after 3 ticks and another
//     replica takes over at once. Each scheduled time is enqueued once.
//  4. Unique until done: three producers race to enqueue one refund
//     (asynqlock.UniqueUntilDone); one enqueues it, the others are refused
//     with its task id, as is an enqueue while it runs; once it is done,
//     the next enqueue goes in.
//
// It runs on an embedded Redis by default, or on REDIS_URL under random
// queues and prefixes. It exits non-zero when the library misbehaves.
//
//	make demo        # or: go run ./examples/asynq
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/asynq
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

const taskType = "invoice:send"

// duplicates is how many times each invoice is enqueued.
var duplicates = map[string]int{"42": 5, "43": 3}

func main() { demorun.Main("asynq demo", run) }

// run runs the invoice part and checks that every invoice was sent exactly
// once, then the report part (see reports) and checks that every report
// ran with at most reportLimit at once.
func run(ctx context.Context, env *demorun.Env) error {
	fmt.Fprintf(env.Out, "\n== Part 1: duplicate jobs, each invoice sent once (asynqlock.WithDoneTTL) ==\n")
	s, err := invoices(ctx, env)
	if err != nil {
		return err
	}
	want := int64(len(duplicates))
	enqueued := int64(0)
	for _, n := range duplicates {
		enqueued += int64(n)
	}
	if s.ran != want || s.dropped != enqueued-want {
		return fmt.Errorf("%d tasks ran and %d were dropped, want %d and %d", s.ran, s.dropped, want, enqueued-want)
	}
	fmt.Fprintf(env.Out, "\n== Part 2: at most %d report jobs at once (asynqlock.WithLimit) ==\n", reportLimit)
	rs, err := reports(ctx, env)
	if err != nil {
		return err
	}
	if err := checkReports(rs); err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "\n== Part 3: a scheduler in every replica, each tick enqueued once (asynqlock.Scheduler) ==\n")
	counts, err := scheduled(ctx, env)
	if err != nil {
		return err
	}
	if err := checkTicks(env.Out, counts); err != nil {
		return err
	}
	fmt.Fprintf(env.Out, "\n== Part 4: a task unique until it is done, decided at the enqueue (asynqlock.UniqueUntilDone) ==\n")
	us, err := unique(ctx, env)
	if err != nil {
		return err
	}
	return checkUnique(us)
}

// stats counts what happened to the tasks.
type stats struct {
	ran      int64 // handler runs
	dropped  int64 // tasks removed because their invoice was already sent
	requeued int64 // times a task found its invoice being sent and was requeued
}

// invoices enqueues the duplicates, runs them on an asynq server through
// an asynqlock.Guard, waits until the queue is empty, and reports.
func invoices(ctx context.Context, env *demorun.Env) (stats, error) {
	w := &syncWriter{w: env.Out} // handlers of different invoices run at once
	guard, err := invoiceGuard(env)
	if err != nil {
		return stats{}, err
	}
	var ran, dropped, requeued atomic.Int64
	mux := asynq.NewServeMux()
	mux.Use(guard.Middleware())
	mux.HandleFunc(taskType, func(ctx context.Context, t *asynq.Task) error {
		ran.Add(1)
		lease, _ := lock.LeaseFrom(ctx)
		fmt.Fprintf(w, "  sending invoice %s (fence %s)\n", t.Payload(), lease.Fence)
		select {
		case <-time.After(300 * time.Millisecond): // the work
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	err = runQueue(ctx, env.Redis, guard, 5, 100*time.Millisecond, mux, func(err error) {
		var d *asynqlock.DuplicateError
		switch {
		case errors.As(err, &d) && d.Dropped:
			dropped.Add(1)
		case errors.As(err, &d):
			requeued.Add(1)
		default:
			fmt.Fprintf(w, "  task failed: %v\n", err)
		}
	}, func(client *asynq.Client, queue string) error {
		return enqueueInvoices(ctx, w, client, queue)
	})
	if err != nil {
		return stats{}, err
	}
	s := stats{ran: ran.Load(), dropped: dropped.Load(), requeued: requeued.Load()}
	fmt.Fprintf(w, "Done: %d ran, %d dropped (already sent), %d requeues (invoice being sent)\n", s.ran, s.dropped, s.requeued)
	return s, nil
}

// invoiceGuard returns the Guard of the invoice jobs: one job per invoice
// at a time, and a sent invoice not sent again for a minute.
func invoiceGuard(env *demorun.Env) (*asynqlock.Guard, error) {
	// Striped fence counters: a job key space grows without bound (invoice
	// ids here, payload hashes with asynqlock.DefaultKey), and fence
	// counters are never deleted, so N counters instead of one per key
	// keep Redis bounded; each key's fences still strictly increase.
	backend, err := env.BackendWith("asynqlock-invoices", redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		return nil, err
	}
	return asynqlock.New(backend,
		asynqlock.WithTTL(time.Second),          // kept alive while a task runs
		asynqlock.WithPolicy(asynqlock.Requeue), // the default, spelled out
		asynqlock.WithDoneTTL(time.Minute),      // a sent invoice is not sent again within a minute
		asynqlock.WithKeyFunc(func(_ context.Context, t *asynq.Task) (string, error) {
			return "invoice:" + string(t.Payload()), nil
		}),
	)
}

// enqueueInvoices enqueues every invoice of duplicates as many times as
// it says, on queue.
func enqueueInvoices(ctx context.Context, w io.Writer, client *asynq.Client, queue string) error {
	enqueued := 0
	for _, invoice := range []string{"42", "43"} {
		for range duplicates[invoice] {
			if _, err := client.EnqueueContext(ctx, asynq.NewTask(taskType, []byte(invoice)), asynq.Queue(queue)); err != nil {
				return err
			}
			enqueued++
		}
	}
	fmt.Fprintf(w, "Enqueued %d tasks: invoice 42 x%d, invoice 43 x%d\n", enqueued, duplicates["42"], duplicates["43"])
	return nil
}

// runQueue runs an asynq server with concurrency workers on a queue of
// its own (random, deleted at the end), handling tasks with mux (which
// uses guard's middleware); it calls enqueue to fill the queue, passes
// every task error to onErr, and returns once the queue is empty. A
// checkEvery other than 0 replaces asynq's TaskCheckInterval (1s) and
// DelayedTaskCheckInterval (5s, how often requeued tasks come back).
func runQueue(ctx context.Context, rdb *redis.Client, guard *asynqlock.Guard, concurrency int, checkEvery time.Duration,
	mux *asynq.ServeMux, onErr func(error), enqueue func(client *asynq.Client, queue string) error) error {
	var rnd [6]byte
	rand.Read(rnd[:]) // never fails (Go 1.24+)
	queue := "asynqlock-demo-" + hex.EncodeToString(rnd[:])
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency:              concurrency,
		Queues:                   map[string]int{queue: 1},
		IsFailure:                asynqlock.IsFailure,       // a requeued task is not a failure
		RetryDelayFunc:           asynqlock.RetryDelay(nil), // it comes back when the key (or a slot) is likely free
		TaskCheckInterval:        checkEvery,
		DelayedTaskCheckInterval: checkEvery,
		Logger:                   guard.Logger(nil), // without a "revoke task" warning per dropped duplicate
		LogLevel:                 asynq.WarnLevel,   // nor asynq's start and stop lines
		ErrorHandler: asynq.ErrorHandlerFunc(func(_ context.Context, _ *asynq.Task, err error) {
			onErr(err)
		}),
	})
	client := asynq.NewClientFromRedisClient(rdb)
	defer client.Close()
	insp := asynq.NewInspectorFromRedisClient(rdb)
	defer insp.Close()
	defer insp.DeleteQueue(queue, true) // after the server's shutdown
	if err := srv.Start(mux); err != nil {
		return err
	}
	defer srv.Shutdown()
	if err := enqueue(client, queue); err != nil {
		return err
	}
	return waitDrained(ctx, insp, queue, 30*time.Second)
}

// waitDrained polls the queue until no task is pending, running or due
// for retry.
func waitDrained(ctx context.Context, insp *asynq.Inspector, queue string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		qi, err := insp.GetQueueInfo(queue)
		if err == nil && qi.Pending+qi.Active+qi.Scheduled+qi.Retry == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("queue not drained: %w (last: %+v, %v)", ctx.Err(), qi, err)
		case <-tick.C:
		}
	}
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
