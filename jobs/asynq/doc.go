// Package asynqlock makes asynq tasks run at most once at a time per key
// (or at most once per time window, or at most n at a time), with the
// locks of package lock on any lock.Backend; and enqueues periodic tasks
// from every replica of a service, once per tick.
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
// A task's key is its queue, type and payload hash (DefaultKey). A
// duplicate of a running task fails with a *DuplicateError (requeued, or
// deleted under policy Drop); one of a task marked done (WithDoneTTL) is
// deleted without running. With WithLimit(n) a task takes one of n slots
// instead, and fails with a *LimitError when none frees in time.
//
// A Scheduler (NewScheduler) is an asynq.Scheduler for a fleet: every
// replica runs it, the leader elected on its key enqueues, and each tick
// goes out once, under a task id of its own (TickID). docs/asynq.md has
// every outcome, the scheduler's guarantees, and the limits.
package asynqlock
