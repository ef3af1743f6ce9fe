// Package asynqlock makes asynq tasks run at most once at a time per key,
// and optionally at most once per time window, with the locks of package
// lock on any lock.Backend (such as *redisbackend.Backend).
//
// asynq's own Unique option only guards enqueueing, and its task lease can
// expire under a worker that is still running; a Guard instead holds a
// lease with a fencing token for as long as the handler runs:
//
//	guard, err := asynqlock.New(backend,
//		asynqlock.WithTTL(30*time.Second),     // extended every TTL/3 while running
//		asynqlock.WithDoneTTL(10*time.Minute), // optional: drop repeats of a finished task
//	)
//	mux := asynq.NewServeMux()
//	mux.Use(guard.Middleware())
//	srv := asynq.NewServer(redisOpt, asynq.Config{
//		IsFailure:      asynqlock.IsFailure,       // a requeued duplicate is not a failure
//		RetryDelayFunc: asynqlock.RetryDelay(nil), // retry it when the holder's lease ends
//	})
//
// The key of a task is, by default, its type and the SHA-256 of its
// payload (DefaultKey), under the prefix "asynq:"; WithKeyFunc and
// WithPrefix change that.
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
//     asynq.Retention) and the ErrorHandler sees why it did not run.
//   - The lock backend fails: the task fails with a retryable error
//     wrapping the backend's (lock.CodeOf tells the cause); the handler
//     does not run unprotected.
//   - Otherwise the handler runs while the lease is kept alive. LeaseFrom
//     gives it the lease and its fence. If the lease is lost, the
//     handler's context is cancelled with cause lock.ErrLeaseLost and the
//     task fails with an error matching lock.ErrLeaseLost, so asynq
//     retries it, whatever the handler returned.
//
// The done marker (WithDoneTTL) is written by the same atomic step that
// releases the lock after a successful run (lock.Completer.ReleaseDone), and
// checked while holding the lock, so no duplicate can run between the end
// of one run and the marker. Failed, panicking and lease-losing runs write
// no marker. It needs a backend that implements lock.Completer; a
// decorating backend (such as a tracing wrapper) that hides it makes New
// fail rather than silently run duplicates.
//
// Keys and Redis memory: the backend keeps a fence counter for every key
// it ever locked (fence counters must never be deleted, or fences would
// repeat). The default key, one per distinct payload, therefore leaves one
// small key in Redis per distinct task; when payloads are unbounded, prefer
// a KeyFunc over a bounded set of keys, such as the id of the entity the
// task works on.
//
// Errors from asynq's point of view: IsDuplicate recognises a duplicate in
// an asynq.ErrorHandler; everything else is an ordinary task error.
package asynqlock
