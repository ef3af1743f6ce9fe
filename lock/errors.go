package lock

import (
	"errors"
	"strconv"
	"time"
)

// Sentinel errors. Test for them with errors.Is.
var (
	// ErrLocked reports contention: another lease holds the key. It is an
	// outcome, not a failure. Backends return it as a [*LockedError].
	ErrLocked = errors.New("syncguard: locked")
	// ErrNotHeld reports that a lease is gone, expired, or owned by
	// someone else (a backend's lockdriver.NotHeldError matches it).
	ErrNotHeld = errors.New("syncguard: lease not held")
	// ErrLeaseLost is the cause given to a context cancelled by [Keep] or
	// [Do] when the lease it protects was lost.
	ErrLeaseLost = errors.New("syncguard: lease lost")
	// ErrKindMismatch reports a key used both as a lock and as a
	// concurrency limit ([WithLimit]): a live lease of the other kind
	// holds it, untouched. It comes inside an [*Error] with
	// [CodeInvalidArgument]: mixing the two on one key is a mistake in
	// the program, not contention.
	ErrKindMismatch = errors.New("syncguard: the key is held as a lock and asked for as a concurrency limit, or the reverse")
	// ErrFuncPanicked is the outcome passed to a [WithReleaseFunc]
	// function when Do's function panicked (the panic itself continues
	// after the release).
	ErrFuncPanicked = errors.New("syncguard: function panicked")
)

// LockedError is the contention error returned by Backend.Acquire. It
// matches [ErrLocked] with errors.Is.
type LockedError struct {
	// ExpiresAt is the holder's expiry by the backend's clock, when known
	// (zero otherwise). A caller may use it for a Retry-After hint.
	ExpiresAt time.Time
}

// Error implements error.
func (e *LockedError) Error() string { return ErrLocked.Error() }

// Is reports whether target is ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Code classifies system failures. The set and the names follow the
// syncguard specification.
type Code string

// The error codes.
const (
	// CodeServiceUnavailable: the store cannot be reached or refuses work
	// (connection refused or reset, loading, read-only replica, out of memory).
	CodeServiceUnavailable Code = "ServiceUnavailable"
	// CodeAuthFailed: the store rejected the credentials or permissions.
	CodeAuthFailed Code = "AuthFailed"
	// CodeInvalidArgument: bad input (key, id, ttl, configuration) or a
	// store command rejected as malformed (such as WRONGTYPE).
	CodeInvalidArgument Code = "InvalidArgument"
	// CodeRateLimited: the store asked the caller to slow down.
	CodeRateLimited Code = "RateLimited"
	// CodeNetworkTimeout: the store did not answer in time.
	CodeNetworkTimeout Code = "NetworkTimeout"
	// CodeAcquisitionTimeout: Do gave up waiting for a busy key (timeout or
	// retries exhausted). The error also matches ErrLocked.
	CodeAcquisitionTimeout Code = "AcquisitionTimeout"
	// CodeAborted: the caller's context was cancelled. The error also
	// matches context.Canceled.
	CodeAborted Code = "Aborted"
	// CodeInternal: an invariant broke (corrupt data in the store, fence
	// overflow, an unexpected reply).
	CodeInternal Code = "Internal"
)

// Transient reports whether a failure with code c is worth another try:
// the store was unreachable, slow or busy (ServiceUnavailable, which
// covers a server still loading its data, NetworkTimeout, RateLimited).
// Every retry of this module, and every background clean-up, uses it.
func (c Code) Transient() bool {
	switch c {
	case CodeServiceUnavailable, CodeNetworkTimeout, CodeRateLimited:
		return true
	}
	return false
}

// Error is a system failure. It never contains a raw key or lock id.
type Error struct {
	// Code classifies the failure.
	Code Code
	// Op is the operation: "acquire", "release", "extend", "is_locked",
	// "lookup", "do", "config".
	Op string
	// Msg describes the failure for people.
	Msg string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	s := "syncguard: "
	if e.Op != "" {
		s += e.Op + ": "
	}
	s += string(e.Code)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code (and the same
// Op when target's Op is set), so errors.Is(err, &lock.Error{Code:
// lock.CodeInternal}) works.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Code == e.Code && (t.Op == "" || t.Op == e.Op)
}

// CodeOf returns the Code of the first *Error in err's chain, or "" when
// there is none (nil, contention, not-held, or a foreign error).
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// newError builds an *Error.
func newError(code Code, op, msg string, err error) *Error {
	return &Error{Code: code, Op: op, Msg: msg, Err: err}
}

// invalid builds an InvalidArgument error.
func invalid(op, msg string) *Error { return newError(CodeInvalidArgument, op, msg, nil) }

// itoa formats n for messages without fmt.
func itoa(n int) string { return strconv.Itoa(n) }
