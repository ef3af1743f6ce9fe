package guard

import (
	"errors"
	"strconv"
)

// Errors of replay mode. Serve returns them wrapped (errors.Is matches),
// and ErrorProblem answers each with its own status.
var (
	// ErrKeyReused: a response is stored for the key, but for a different
	// request (another fingerprint). Answered 422.
	ErrKeyReused = errors.New("syncguard: the key was used for a different request")
	// ErrRequestTooLarge: the request body is over the replay request
	// body limit, so it cannot be fingerprinted. Answered 413.
	ErrRequestTooLarge = errors.New("syncguard: request body over the replay limit")
	// ErrRequestBody: the request body could not be read. Answered 400.
	ErrRequestBody = errors.New("syncguard: request body unreadable")
	// ErrFingerprint: the application's fingerprint function failed.
	// Answered 400.
	ErrFingerprint = errors.New("syncguard: request fingerprint failed")
	// ErrBadRecord: the value stored for the key is not a response record
	// this version can read (corrupt, foreign or from a newer format).
	// Answered 500, and logged, until it expires or is deleted; neither a
	// replay nor a new run happens meanwhile.
	ErrBadRecord = errors.New("syncguard: the stored response is unreadable")
	// ErrNotReplayable: a request with the key and the same fingerprint
	// completed, but its response could not be stored (its body was over
	// the replay body limit), so it can be neither replayed nor run again.
	// Answered 409, without Retry-After, until the record expires.
	ErrNotReplayable = errors.New("syncguard: the request completed, but its response was not stored and cannot be replayed")
	// ErrScope: the request's scope (the authenticated principal) could
	// not be read, or is empty. Answered 401: the request reached the
	// middleware without the identity its key belongs to.
	ErrScope = errors.New("syncguard: no scope (authenticated principal) for the request")
)

// NotReplayableError is the error of a request whose key's record says
// that a request with the same fingerprint completed with Status, but its
// response was not stored. It matches ErrNotReplayable.
type NotReplayableError struct {
	// Status is the status the completed request answered.
	Status int
}

func (e *NotReplayableError) Error() string {
	return ErrNotReplayable.Error() + " (it answered " + strconv.Itoa(e.Status) + ")"
}

// Is reports whether target is ErrNotReplayable.
func (e *NotReplayableError) Is(target error) bool { return target == ErrNotReplayable }
