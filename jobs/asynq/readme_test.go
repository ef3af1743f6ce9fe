package asynqlock_test

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"os"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The README's asynq snippet, kept compiling (it needs a live Redis, so
// nothing calls it); testkit/readme checks that README.md quotes the
// marked regions, joined, verbatim.

// README: asynq
import asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"

// END README

func readmeAsynq(rdb *redis.Client, send func(context.Context, *asynq.Task, lock.Fence) error) error {
	// README: asynq
	// Striped fence counters: the default key (one per distinct payload)
	// would otherwise leave one fence counter in Redis per payload, forever.
	backend, _ := redisbackend.New(rdb, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	guard, err := asynqlock.New(backend,
		asynqlock.WithTTL(30*time.Second),     // extended every TTL/3 while the task runs
		asynqlock.WithDoneTTL(10*time.Minute), // optional: drop repeats of a finished task
	)
	if err != nil {
		log.Fatal(err)
	}
	mux := asynq.NewServeMux()
	mux.Use(guard.Middleware()) // or guard.Wrap(handler) for one handler
	mux.HandleFunc("invoice:send", func(ctx context.Context, t *asynq.Task) error {
		lease, _ := lock.LeaseFrom(ctx) // lease.Fence for writes; ctx ends if the lease is lost
		return send(ctx, t, lease.Fence)
	})
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		IsFailure:      asynqlock.IsFailure,       // a requeued duplicate is not a failure
		RetryDelayFunc: asynqlock.RetryDelay(nil), // and returns when the holder's lease ends
		Logger:         guard.Logger(nil),         // no "revoke task" warning per dropped duplicate
	})
	// END README
	return srv.Run(mux)
}

// The package comment's snippet (doc.go), kept compiling the same way.
func docAsynq(rdb *redis.Client) error {
	// README: asynq-doc
	// Striped fence counters: one key per distinct payload would otherwise
	// leave one counter in Redis per payload, forever.
	backend, err := redisbackend.New(rdb, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		return err
	}
	guard, err := asynqlock.New(backend,
		asynqlock.WithTTL(30*time.Second),     // extended every TTL/3 while running
		asynqlock.WithDoneTTL(10*time.Minute), // optional: drop repeats of a finished task
	)
	if err != nil {
		return err
	}
	mux := asynq.NewServeMux()
	mux.Use(guard.Middleware())
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		IsFailure:      asynqlock.IsFailure,       // a requeued duplicate is not a failure
		RetryDelayFunc: asynqlock.RetryDelay(nil), // retry it when the holder's lease ends
		Logger:         guard.Logger(nil),         // no warning per dropped duplicate
	})
	return srv.Run(mux)
	// END README
}

// The package comment's limit snippet (doc.go), kept compiling the same way.
func docAsynqLimit(backend lock.Backend, mux *asynq.ServeMux) error {
	// README: asynq-doc-limit
	dedup, err := asynqlock.New(backend, asynqlock.WithDoneTTL(10*time.Minute))
	if err != nil {
		return err
	}
	limit, err := asynqlock.New(backend, asynqlock.WithLimit(2)) // at most 2 running tasks per type
	if err != nil {
		return err
	}
	mux.Use(dedup.Middleware(), limit.Middleware()) // a duplicate never takes a slot
	// END README
	return nil
}

// The README's limit snippet.
func readmeAsynqLimit(backend lock.Backend) (*asynqlock.Guard, *asynqlock.Guard, error) {
	// README: asynq-limit
	// At most 2 running tasks of each type, across every worker and server.
	reports, err := asynqlock.New(backend, asynqlock.WithLimit(2))
	if err != nil {
		return nil, nil, err
	}
	// At most 2 running tasks of each tenant.
	perTenant, err := asynqlock.New(backend, asynqlock.WithLimit(2),
		asynqlock.WithKeyFunc(func(ctx context.Context, t *asynq.Task) (string, error) {
			var p struct{ Tenant string }
			err := json.Unmarshal(t.Payload(), &p)
			return "tenant:" + p.Tenant, err // an error archives the task
		}))
	// END README
	return reports, perTenant, err
}

// The limit guide's server snippet: more workers than the limit admits.
func readmeAsynqLimitServer(rdb *redis.Client, reports *asynqlock.Guard, mux *asynq.ServeMux) error {
	// README: asynq-limit-server
	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
		// Above the limit, so the limit is what holds tasks back: with
		// asynq's default (one worker per CPU) a 2-core machine never runs
		// more than 2 tasks at once, and a limit of 2 would look enforced
		// without ever being tested.
		Concurrency:    8,
		IsFailure:      asynqlock.IsFailure,       // a task that found every slot taken is requeued, not failed
		RetryDelayFunc: asynqlock.RetryDelay(nil), // and retried when a slot frees
		Logger:         reports.Logger(nil),
	})
	mux.Use(reports.Middleware())
	return srv.Run(mux)
	// END README
}

// The scheduler guide's snippet: the code every replica runs.
func readmeAsynqScheduler(ctx context.Context, rdb *redis.Client, backend lock.Backend) error {
	// README: asynq-scheduler
	client := asynq.NewClientFromRedisClient(rdb)
	hostname, _ := os.Hostname()
	sched, err := asynqlock.NewScheduler(client, backend, "scheduler:reports", hostname,
		election.WithTTL(10*time.Second)) // a dead leader's ticks resume within about 10s
	if err != nil {
		return err
	}
	// The same registrations on every replica; the name keeps the entry's record across edits.
	if _, err := sched.Register("0 9 * * *", asynq.NewTask("report:daily", nil),
		asynq.Queue("reports"), asynqlock.EntryName("daily-report")); err != nil {
		return err
	}
	return sched.Run(ctx) // on every replica: one leads and enqueues, the others wait their turn
	// END README
}

// The README's first asynq example.
func readmeAsynqFront(backend lock.Backend, mux *asynq.ServeMux, send func(context.Context, *asynq.Task, lock.Fence) error) error {
	// README: front-asynq
	guard, err := asynqlock.New(backend, asynqlock.WithDoneTTL(10*time.Minute)) // drop repeats for 10 min
	if err != nil {
		return err
	}
	mux.Use(guard.Middleware()) // one task per payload at a time, kept alive while it runs
	mux.HandleFunc("invoice:send", func(ctx context.Context, t *asynq.Task) error {
		lease, _ := lock.LeaseFrom(ctx)
		return send(ctx, t, lease.Fence)
	})
	// END README
	return nil
}

// The unique-until-done enqueue of docs/asynq.md.
func readmeAsynqUnique(ctx context.Context, rdb *redis.Client, client *asynq.Client, backend lock.Backend, payload []byte) error {
	// README: asynq-unique
	insp := asynq.NewInspectorFromRedisClient(rdb)
	info, err := asynqlock.Enqueue(ctx, client, asynq.NewTask("invoice:send", payload),
		asynqlock.TaskOptions(asynq.Queue("billing")),
		asynqlock.UniqueUntilDone(backend, insp)) // optional: UniqueKey, UniqueBackstop, UniqueLease
	var dup *asynqlock.DuplicateTaskError
	if errors.As(err, &dup) { // errors.Is(err, asynqlock.ErrDuplicateTask)
		log.Printf("already queued as %s", dup.TaskID)
	}
	// END README
	_ = info
	return err
}
