package httpguard

import (
	"errors"
	"strconv"
)

// Errors a request is refused with. Adapters pass them, wrapped, to the
// error or busy handler; match them with errors.Is. ErrorProblem gives
// each its answer.
var (
	// ErrKeyReused: a response is stored for the key, for a different
	// request. Answered 422.
	ErrKeyReused = errors.New("syncguard: the key was used for a different request")
	// ErrRequestTooLarge: the request body is over the replay limit.
	// Answered 413.
	ErrRequestTooLarge = errors.New("syncguard: request body over the replay limit")
	// ErrRequestBody: the request body could not be read. Answered 400.
	ErrRequestBody = errors.New("syncguard: request body unreadable")
	// ErrFingerprint: the fingerprint function failed. Answered 400.
	ErrFingerprint = errors.New("syncguard: request fingerprint failed")
	// ErrBadRecord: the value stored for the key is not a record this
	// version can read. Answered 500 until it expires or is deleted.
	ErrBadRecord = errors.New("syncguard: the stored response is unreadable")
	// ErrNotReplayable: a request with the key completed, but its
	// response was too large to store. Answered 409, never run again.
	ErrNotReplayable = errors.New("syncguard: the request completed, but its response was not stored and cannot be replayed")
	// ErrScope: the scope function failed or returned "". Answered 401.
	ErrScope = errors.New("syncguard: no scope (authenticated principal) for the request")
	// ErrLimitReached: every slot of the key's concurrency limit is taken.
	// The error also matches lock.ErrLocked. Answered 429.
	ErrLimitReached = errors.New("syncguard: the concurrency limit of the key is reached")
)

// NotReplayableError is the ErrNotReplayable of a request whose earlier
// run answered Status.
type NotReplayableError struct {
	// Status is the status the completed request answered.
	Status int
}

func (e *NotReplayableError) Error() string {
	return ErrNotReplayable.Error() + " (it answered " + strconv.Itoa(e.Status) + ")"
}

// Is reports whether target is ErrNotReplayable.
func (e *NotReplayableError) Is(target error) bool { return target == ErrNotReplayable }
