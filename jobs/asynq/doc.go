// Package asynqlock runs asynq tasks at most once at a time per key. It
// can also run them at most once per time window, or at most n at a time,
// on any lock.Backend. Its Scheduler enqueues periodic tasks from every
// replica of a service, once per tick.
//
// asynq's Unique option only guards enqueueing; a Guard holds a lease with
// a fencing token for as long as the handler runs:
//
//	// Striped fence counters: one key per distinct payload would otherwise
//	// leave one counter in Redis per payload, forever.
//	backend, err := redisbackend.New(rdb, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
//	if err != nil {
//		return err
//	}
//	guard, err := asynqlock.New(backend,
//		asynqlock.WithTTL(30*time.Second),     // extended every TTL/3 while running
//		asynqlock.WithDoneTTL(10*time.Minute), // optional: drop repeats of a finished task
//	)
//	if err != nil {
//		return err
//	}
//	mux := asynq.NewServeMux()
//	mux.Use(guard.Middleware())
//	srv := asynq.NewServerFromRedisClient(rdb, asynq.Config{
//		IsFailure:      asynqlock.IsFailure,       // a requeued duplicate is not a failure
//		RetryDelayFunc: asynqlock.RetryDelay(nil), // retry it when the holder's lease ends
//		Logger:         guard.Logger(nil),         // no warning per dropped duplicate
//	})
//	return srv.Run(mux)
//
// A task's key is its queue, type and payload hash. A duplicate of a
// running task fails with a *DuplicateError: it is requeued, or deleted
// under policy Drop. With WithDoneTTL a repeat of a finished task is
// deleted without running. With WithLimit a task takes one of n slots.
//
// What it does not guarantee: a worker that stalls past its lease may
// still run when a duplicate starts. The handler's context ends when the
// lease is lost; pass the lease's fence to what it writes.
//
// A Scheduler is an asynq.Scheduler for a fleet. docs/asynq.md in the
// repository has every outcome, the scheduler's guarantees and the limits.
package asynqlock
