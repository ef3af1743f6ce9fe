package guard

import "errors"

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
)
