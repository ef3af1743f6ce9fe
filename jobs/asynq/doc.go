// Package asynqlock runs asynq tasks at most once at a time per key, on
// any lock.Backend. A Guard holds a fenced lease while the handler runs:
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
// Enqueue with UniqueUntilDone refuses a task while another with its key
// is alive (pending, scheduled, retrying or running), with an error
// matching ErrDuplicateTask.
// A Scheduler enqueues periodic tasks once per tick across a fleet.
// Enqueue enqueues a task with the caller's trace context in its headers,
// and each delivery through a Guard is an OpenTelemetry span in that
// trace, with the lock's spans inside.
// docs/asynq.md has every outcome, the guarantees and their limits.
package asynqlock
