package guard

import (
	"errors"
	"strconv"
)

// Errors a request is refused with, passed wrapped to the error or busy
// handler.
var (
	// ErrKeyReused: the key's stored response is a different request's (422).
	ErrKeyReused = errors.New("syncguard: the key was used for a different request")
	// ErrRequestTooLarge: the request body is over the replay limit (413).
	ErrRequestTooLarge = errors.New("syncguard: request body over the replay limit")
	// ErrRequestBody: the request body could not be read. Answered 400.
	ErrRequestBody = errors.New("syncguard: request body unreadable")
	// ErrFingerprint: the fingerprint function failed. Answered 400.
	ErrFingerprint = errors.New("syncguard: request fingerprint failed")
	// ErrBadRecord: the value stored for the key is unreadable (500).
	ErrBadRecord = errors.New("syncguard: the stored response is unreadable")
	// ErrNotReplayable: the request completed, its response not stored (409).
	ErrNotReplayable = errors.New("syncguard: the request completed, but its response was not stored and cannot be replayed")
	// ErrScope: the scope function failed or returned "". Answered 401.
	ErrScope = errors.New("syncguard: no scope (authenticated principal) for the request")
	// ErrLimitReached: every slot of the key's limit is taken (429). It also
	// matches lock.ErrLocked.
	ErrLimitReached = errors.New("syncguard: the concurrency limit of the key is reached")
)

// NotReplayableError is the ErrNotReplayable of a request whose earlier
// run answered Status.
type NotReplayableError struct {
	// Status is what the completed request answered.
	Status int
}

func (e *NotReplayableError) Error() string {
	return ErrNotReplayable.Error() + " (it answered " + strconv.Itoa(e.Status) + ")"
}

// Is reports whether target is ErrNotReplayable.
func (e *NotReplayableError) Is(target error) bool { return target == ErrNotReplayable }
