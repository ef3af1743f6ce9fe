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
func (e *DuplicateError) Unwrap() []error {
	errs := make([]error, 0, 2)
	if !e.Done {
		errs = append(errs, lock.ErrLocked)
	}
	if e.Dropped {
		errs = append(errs, asynq.RevokeTask)
	}
	return errs
}

// IsDuplicate reports whether err (or an error it wraps) is a
// *DuplicateError: the task did not run because of another task with the
// same key.
func IsDuplicate(err error) bool {
	var d *DuplicateError
	return errors.As(err, &d)
}

// IsFailure is an asynq.Config.IsFailure function: a duplicate is not a
// failure, any other non-nil error is. asynq does not count a non-failure
// in the queue's failed and processed stats nor in the task's retry count,
// so a requeued duplicate is never archived for running out of retries.
func IsFailure(err error) bool {
	return err != nil && !IsDuplicate(err)
}

func itoa(n int) string { return strconv.Itoa(n) }
