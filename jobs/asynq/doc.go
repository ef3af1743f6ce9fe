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
// The key of a task is, by default, its queue, its type and the SHA-256 of
// its payload (DefaultKey), as for asynq's own Unique option, under the
// prefix "asynq:"; WithKeyFunc and WithPrefix change that.
//
// What happens to a task:
//
//   - Its key is invalid (or the KeyFunc fails): it fails with an error
//     matching ErrInvalidKey and asynq.SkipRetry, so asynq archives it. No
//     backend call is made.
//   - Its key is busy: it fails with a *DuplicateError. Under policy Requeue
//     (the default) asynq retries it; with IsFailure and RetryDelay wired as
//     above, the retry is not counted as a failure (nor against MaxRetry)
//     and comes when the holder's lease expires. Without IsFailure, each
//     requeue uses up one of the task's retries. Under policy Drop the error
//     matches asynq.RevokeTask and asynq deletes the task.
//   - Its key is marked done (WithDoneTTL): it is deleted like a dropped
//     duplicate (asynq.RevokeTask, with DuplicateError.Done set) without
//     running the handler. asynq.RevokeTask is used rather than a nil
//     error so that the task is not recorded as completed (with
//     asynq.Retention), the ErrorHandler sees why it did not run, and
//     middleware around the Guard does not count it as a success. asynq
//     logs a "revoke task" warning for every task deleted so (a burst of
//     200 copies of one task logs 199); the Guard's Logger, set as
//     asynq.Config.Logger, leaves out those warnings only, where
//     asynq.Config.LogLevel = asynq.ErrorLevel would silence every
//     warning of the server.
//   - The lock backend fails: the task fails with a retryable error
//     wrapping the backend's (lock.CodeOf tells the cause); the handler
//     does not run unprotected.
//   - Otherwise the handler runs while the lease is kept alive. lock.LeaseFrom
//     gives it the lease and its fence. If the lease is lost, the
//     handler's context is cancelled with cause lock.ErrLeaseLost and the
//     task fails with an error matching lock.ErrLeaseLost, so asynq
//     retries it, whatever the handler returned.
//
// The done marker (WithDoneTTL) is written by the same atomic step that
// releases the lock after a successful run (lock.Recorder.ReleaseDone), and
// checked while holding the lock, so no duplicate can run between the end
// of one run and the marker. Failed, panicking and lease-losing runs write
// no marker. It needs a backend that implements lock.Recorder (one wrapped
// with lock.WithHooks, such as otellock.Wrap's, does when what it wraps
// does); a decorating backend that hides it makes New fail rather than
// silently run duplicates.
//
// Keys and Redis memory: fence counters are never deleted (fences would
// repeat), and the default key, one per distinct payload, makes the key
// space unbounded. Build the backend with striped fence counters
// (redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes}),
// as above: Redis then holds at most that many counters whatever the
// number of distinct tasks, and each key's fences still strictly increase
// (they are no longer consecutive). With one counter per key (the
// default of redisbackend) every distinct task leaves a small key in
// Redis forever; that suits only a bounded key set, such as a KeyFunc
// returning the id of the entity the task works on.
//
// New does not warn about a per-key backend with DefaultKey: a
// lock.Backend does not say how it counts fences (lock knows no such
// option, and a decorator such as otellock would hide any method that
// told), and whether payloads are unbounded is the application's
// knowledge, not the Guard's.
//
// Concurrency limits: WithLimit(n) makes a Guard take one of n slots of
// the key instead of its lock, so that at most n tasks with the key run at
// once across every worker and server; the key is the task type (TypeKey)
// under the prefix "asynq-limit:", or whatever WithKeyFunc returns (a
// tenant's id, say). A slot is an ordinary lease (fence, keep-alive,
// lock.LeaseFrom). A task that finds every slot taken waits for one in
// the backend's queue of the key, for up to WithLimitWait (5s by default,
// and at most half the time left before the task's asynq deadline): the
// release of a slot, in any worker of any server, hands it to the oldest
// waiting task at once. Waiting matters because asynq brings a requeued
// task back only every Config.DelayedTaskCheckInterval (5s by default):
// requeued at once, a limit of n would run about n tasks per interval. A
// task that gets no slot within its wait fails with a *LimitError and is
// handled like a busy duplicate: requeued under policy Requeue (not a
// failure with IsFailure; RetryDelay brings it back by the earliest slot
// expiry), deleted under Drop; it never runs without a slot. A waiting
// task holds its asynq worker. A limit does not combine with WithDoneTTL (New rejects
// it): a done marker on a key that many different tasks share would drop
// them all. To deduplicate and limit, chain two Guards:
//
//	dedup, err := asynqlock.New(backend, asynqlock.WithDoneTTL(10*time.Minute))
//	if err != nil {
//		return err
//	}
//	limit, err := asynqlock.New(backend, asynqlock.WithLimit(2)) // at most 2 running tasks per type
//	if err != nil {
//		return err
//	}
//	mux.Use(dedup.Middleware(), limit.Middleware()) // a duplicate never takes a slot
//
// Errors from asynq's point of view: IsDuplicate recognises a duplicate
// and IsLimited a task over its limit in an asynq.ErrorHandler; everything
// else is an ordinary task error.
package asynqlock
