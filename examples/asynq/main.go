// Asynq shows asynqlock deduplicating asynq jobs: duplicate "send invoice"
// tasks are enqueued, an asynq server runs them through an
// asynqlock.Guard (policy Requeue, done TTL one minute), and every invoice
// is sent exactly once. Duplicates that arrive while an invoice is being
// sent are requeued; those that arrive after it was sent are dropped.
//
// It needs no set-up: by default it runs asynq and the locks on an
// embedded Redis (miniredis).
//
//	go run ./examples/asynq
//
// To use a real Redis server instead, set REDIS_URL. The demo uses a queue
// and a lock prefix of its own (random), deletes the queue at the end, and
// leaves only what expires by itself plus a fence counter for each stripe
// used (syncguard never deletes fence counters; with striped counters there
// are at most redisbackend.DefaultFenceStripes of them per prefix, however
// many invoices).
//
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/asynq
//
// It exits non-zero when an invoice is sent more or less than once.
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

// run runs the demo on env's Redis and checks that every invoice was sent
// exactly once.
func run(ctx context.Context, env *demorun.Env) error {
	s, err := demo(ctx, env.Out, env.Redis)
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
	return nil
}

// stats counts what happened to the tasks.
type stats struct {
	ran      int64 // handler runs
	dropped  int64 // tasks removed because their invoice was already sent
	requeued int64 // times a task found its invoice being sent and was requeued
}

// demo enqueues the duplicates, runs them on an asynq server through an
// asynqlock.Guard, waits until the queue is empty, and reports.
func demo(ctx context.Context, w io.Writer, rdb *redis.Client) (stats, error) {
	w = &syncWriter{w: w} // handlers of different invoices run at once
	var rnd [6]byte
	rand.Read(rnd[:]) // never fails (Go 1.24+)
	id := hex.EncodeToString(rnd[:])
	queue := "asynqlock-demo-" + id

	// Striped fence counters: a job key space grows without bound (invoice
	// ids here, payload hashes with asynqlock.DefaultKey), and fence
	// counters are never deleted, so N counters instead of one per key
	// keep Redis bounded; each key's fences still strictly increase.
	backend, err := redisbackend.New(rdb, &redisbackend.Options{
		Prefix:       "asynqlock-demo:" + id,
		FenceStripes: redisbackend.DefaultFenceStripes,
	})
	if err != nil {
		return stats{}, err
	}
	guard, err := asynqlock.New(backend,
		asynqlock.WithTTL(time.Second),          // kept alive while a task runs
		asynqlock.WithPolicy(asynqlock.Requeue), // the default, spelled out
		asynqlock.WithDoneTTL(time.Minute),      // a sent invoice is not sent again within a minute
		asynqlock.WithKeyFunc(func(_ context.Context, t *asynq.Task) (string, error) {
			return "invoice:" + string(t.Payload()), nil
		}),
	)
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
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		Concurrency:              5,
		Queues:                   map[string]int{queue: 1},
		IsFailure:                asynqlock.IsFailure,       // a requeued duplicate is not a failure
		RetryDelayFunc:           asynqlock.RetryDelay(nil), // it comes back when the holder's lease ends
		TaskCheckInterval:        100 * time.Millisecond,
		DelayedTaskCheckInterval: 100 * time.Millisecond,
		Logger:                   guard.Logger(nil), // without a "revoke task" warning per dropped duplicate
		LogLevel:                 asynq.WarnLevel,   // nor asynq's start and stop lines
		ErrorHandler: asynq.ErrorHandlerFunc(func(_ context.Context, _ *asynq.Task, err error) {
			var d *asynqlock.DuplicateError
			switch {
			case errors.As(err, &d) && d.Dropped:
				dropped.Add(1)
			case errors.As(err, &d):
				requeued.Add(1)
			default:
				fmt.Fprintf(w, "  task failed: %v\n", err)
			}
		}),
	})
	client := asynq.NewClientFromRedisClient(rdb)
	defer client.Close()
	insp := asynq.NewInspectorFromRedisClient(rdb)
	defer insp.Close()
	defer insp.DeleteQueue(queue, true) // after the server's shutdown
	if err := srv.Start(mux); err != nil {
		return stats{}, err
	}
	defer srv.Shutdown()

	enqueued := 0
	for _, invoice := range []string{"42", "43"} {
		for range duplicates[invoice] {
			if _, err := client.EnqueueContext(ctx, asynq.NewTask(taskType, []byte(invoice)), asynq.Queue(queue)); err != nil {
				return stats{}, err
			}
			enqueued++
		}
	}
	fmt.Fprintf(w, "Enqueued %d tasks: invoice 42 x%d, invoice 43 x%d\n", enqueued, duplicates["42"], duplicates["43"])

	if err := waitDrained(ctx, insp, queue, 30*time.Second); err != nil {
		return stats{}, err
	}
	s := stats{ran: ran.Load(), dropped: dropped.Load(), requeued: requeued.Load()}
	fmt.Fprintf(w, "Done: %d ran, %d dropped (already sent), %d requeues (invoice being sent)\n", s.ran, s.dropped, s.requeued)
	return s, nil
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
