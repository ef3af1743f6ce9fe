package asynqlock

import (
	"errors"
	"strconv"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
)

// ErrInvalidKey is matched by the error of a task whose key is invalid;
// that error also matches asynq.SkipRetry.
var ErrInvalidKey = errors.New("asynqlock: invalid lock key")

// DuplicateError is the error of a task that did not run because its key
// was busy or done. Under policy Drop, and when Done, it also matches
// asynq.RevokeTask.
type DuplicateError struct {
	// ExpiresAt is when the holder's lease expires, or an estimate.
	ExpiresAt time.Time
	// Done is true when a task with this key already succeeded.
	Done bool
	// Superseded is true for a task enqueued with UniqueUntilDone whose
	// key now records another task: it was taken for dead after its worker
	// died, and a producer enqueued the task that replaces it.
	Superseded bool
	// Dropped is true when the task is removed rather than retried.
	Dropped bool
}

// Error implements error.
func (e *DuplicateError) Error() string {
	s := "asynqlock: duplicate task: "
	switch {
	case e.Done:
		s += "key already done"
	case e.Superseded:
		s += "superseded by a newer task with its unique key"
	default:
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
// the task is dropped.
func (e *DuplicateError) Unwrap() []error { return notRun(!e.Done && !e.Superseded, e.Dropped) }

// notRun is what the error of a task the Guard did not run matches.
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

// dropped reports whether the Guard, not the handler, dropped the task.
func dropped(err error) bool {
	var d *DuplicateError
	var l *LimitError
	return errors.As(err, &d) && d.Dropped || errors.As(err, &l) && l.Dropped
}

// LimitError is the error of a task that found every slot of its key's
// limit taken. It matches lock.ErrLocked, and asynq.RevokeTask under
// policy Drop.
type LimitError struct {
	// Limit is the Guard's n.
	Limit int
	// ExpiresAt is the earliest expiry among the slots' leases.
	ExpiresAt time.Time
	// Waited is how long the task waited for a slot.
	Waited time.Duration
	// Dropped is true when the task is removed rather than retried.
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

// Unwrap returns lock.ErrLocked, and asynq.RevokeTask when dropped.
func (e *LimitError) Unwrap() []error { return notRun(true, e.Dropped) }

// IsLimited reports whether err wraps a *LimitError.
func IsLimited(err error) bool {
	var l *LimitError
	return errors.As(err, &l)
}

// IsDuplicate reports whether err wraps a *DuplicateError.
func IsDuplicate(err error) bool {
	var d *DuplicateError
	return errors.As(err, &d)
}

// IsFailure is an asynq.Config.IsFailure function: a *DuplicateError and
// a *LimitError are not failures, so a requeued task uses no retries.
func IsFailure(err error) bool {
	return err != nil && !IsDuplicate(err) && !IsLimited(err)
}

func itoa(n int) string { return strconv.Itoa(n) }
