// Package asynqlock makes asynq tasks run at most once at a time per key,
// and optionally at most once per time window, with the locks of package
// lock on any lock.Backend (such as *redisbackend.Backend); or, with
// WithLimit, at most n at a time per key (per task type by default).
//
// asynq's own Unique option only guards enqueueing, and its task lease can
// expire under a worker that is still running; a Guard instead holds a
// lease with a fencing token for as long as the handler runs:
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
// The key of a task is its queue, its type and the SHA-256 of its payload
// (DefaultKey), as for asynq's Unique option, under the prefix "asynq:".
// A duplicate of a running task fails with a *DuplicateError (requeued,
// or deleted under policy Drop); one of a task marked done (WithDoneTTL,
// written with the release of a successful run) is deleted without
// running. The handler reads its lease with lock.LeaseFrom; if the lease
// is lost, its context is cancelled and the task fails with an error
// matching lock.ErrLeaseLost. A backend failure fails the task with a
// retryable error: the handler never runs unprotected.
//
// WithLimit(n) takes one of n slots of the key instead of its lock; a task
// that finds every slot taken waits in the backend's queue for up to
// WithLimitWait, then fails with a *LimitError. IsDuplicate and IsLimited
// tell the two apart in an asynq.ErrorHandler. docs/asynq.md has every
// outcome, limits, and why to stripe fence counters for payload keys.
package asynqlock
