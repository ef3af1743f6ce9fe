package asynqlock

import (
	"errors"
	"strconv"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
)

// ErrInvalidKey is matched (errors.Is) by the error of a task whose key
// could not be derived or is not a valid lock key. That error also matches
// asynq.SkipRetry, so asynq archives the task instead of retrying it. No
// command was sent to the store: keys are checked before any I/O.
var ErrInvalidKey = errors.New("asynqlock: invalid lock key")

// DuplicateError is the error of a task that did not run because of
// another task with the same key: its key was busy (Done false), or it
// carried a done marker (Done true, with WithDoneTTL).
//
// A busy duplicate under policy Requeue is retried by asynq: IsFailure
// keeps that retry from counting as a failure and RetryDelay schedules it
// for when the holder's lease ends. Under policy Drop, and whenever Done is
// true, the error also matches asynq.RevokeTask, so asynq deletes the task
// without retrying or archiving it (asynq still passes the error to its
// ErrorHandler, where IsDuplicate tells it apart, and logs a warning,
// which (*Guard).Logger leaves out).
type DuplicateError struct {
	// ExpiresAt is when the holder's lease expires unless extended, by the
	// backend's clock; when the backend does not say, it is an estimate
	// (the local time plus the Guard's TTL). Zero when Done.
	ExpiresAt time.Time
	// Done is true when the key carried a done marker: a task with this
	// key already succeeded within the done TTL.
	Done bool
	// Dropped is true when the task is removed (the error matches
	// asynq.RevokeTask) rather than retried.
	Dropped bool
}

// Error implements error.
func (e *DuplicateError) Error() string {
	s := "asynqlock: duplicate task: "
	if e.Done {
		s += "key already done"
	} else {
		s += "key busy until " + e.ExpiresAt.UTC().Format(time.RFC3339Nano)
	}
	if e.Dropped {
		s += "; dropped"
	} else {
		s += "; requeued"
	}
	return s
}

// Unwrap returns lock.ErrLocked for a busy key and asynq.RevokeTask when
// the task is dropped, so errors.Is matches either.
func (e *DuplicateError) Unwrap() []error { return notRun(!e.Done, e.Dropped) }

// notRun is what the error of a task the Guard did not run matches:
// lock.ErrLocked when its key was busy, asynq.RevokeTask when it is
// dropped.
func notRun(busy, dropped bool) []error {
	errs := make([]error, 0, 2)
	if busy {
		errs = append(errs, lock.ErrLocked)
	}
	if dropped {
		errs = append(errs, asynq.RevokeTask)
	}
	return errs
}

// dropped reports whether err is a task the Guard dropped (it matches
// asynq.RevokeTask because of the Guard, not the handler).
func dropped(err error) bool {
	var d *DuplicateError
	var l *LimitError
	return errors.As(err, &d) && d.Dropped || errors.As(err, &l) && l.Dropped
}

// LimitError is the error of a task that did not run because every slot
// of its key's concurrency limit was taken (see WithLimit), and none freed
// while it waited (see WithLimitWait).
//
// Under policy Requeue asynq retries the task: IsFailure keeps that retry
// from counting as a failure and RetryDelay brings it back by the
// earliest slot expiry. Under policy Drop the error also matches asynq.RevokeTask,
// so asynq deletes the task without retrying or archiving it (IsLimited
// tells it apart in an ErrorHandler; (*Guard).Logger leaves out asynq's
// warning). It always matches lock.ErrLocked.
type LimitError struct {
	// Limit is the Guard's n: how many tasks with the key may run at once.
	Limit int
	// ExpiresAt is the earliest expiry among the leases holding the
	// slots, by the backend's clock: a slot frees by then at the latest
	// unless its holder extends its lease, which a running task does
	// every TTL/3. When the backend does not say, it is an estimate (the
	// local time plus the Guard's TTL).
	ExpiresAt time.Time
	// Waited is how long the task waited for a slot before giving up (see
	// WithLimitWait); 0 when it did not wait.
	Waited time.Duration
	// Dropped is true when the task is removed (the error matches
	// asynq.RevokeTask) rather than retried.
	Dropped bool
}

// Error implements error.
func (e *LimitError) Error() string {
	s := "asynqlock: concurrency limit reached: " + itoa(e.Limit) + " tasks with this key running" +
		" (earliest lease ends " + e.ExpiresAt.UTC().Format(time.RFC3339Nano) + ")"
	if e.Waited > 0 {
		s += ", no slot freed within " + e.Waited.Round(time.Millisecond).String()
	}
	if e.Dropped {
		return s + "; dropped"
	}
	return s + "; requeued"
}

// Unwrap returns lock.ErrLocked, and asynq.RevokeTask when the task is
// dropped, so errors.Is matches either.
func (e *LimitError) Unwrap() []error { return notRun(true, e.Dropped) }

// IsLimited reports whether err (or an error it wraps) is a *LimitError:
// the task did not run because its key's concurrency limit was reached.
func IsLimited(err error) bool {
	var l *LimitError
	return errors.As(err, &l)
}

// IsDuplicate reports whether err (or an error it wraps) is a
// *DuplicateError: the task did not run because of another task with the
// same key.
func IsDuplicate(err error) bool {
	var d *DuplicateError
	return errors.As(err, &d)
}

// IsFailure is an asynq.Config.IsFailure function: a duplicate (a
// *DuplicateError) and a task over its concurrency limit (a *LimitError)
// are not failures, any other non-nil error is. asynq does not count a
// non-failure in the queue's failed and processed stats nor in the task's
// retry count, so a requeued task is never archived for running out of
// retries.
func IsFailure(err error) bool {
	return err != nil && !IsDuplicate(err) && !IsLimited(err)
}

func itoa(n int) string { return strconv.Itoa(n) }
