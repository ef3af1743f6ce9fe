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
	// someone else. Backends return it as a [*NotHeldError].
	ErrNotHeld = errors.New("syncguard: lease not held")
	// ErrLeaseLost is the cause given to a context cancelled by [Keep] or
	// [Do] when the lease it protects was lost.
	ErrLeaseLost = errors.New("syncguard: lease lost")
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

// NotHeldReason says why a lease is not held.
type NotHeldReason string

// The reasons a release or extend finds no lease to act on.
const (
	// NotHeldNotFound: no lease with that id exists (never did, released,
	// or removed by TTL).
	NotHeldNotFound NotHeldReason = "not_found"
	// NotHeldExpired: the lease was observed expired (and cleaned up).
	NotHeldExpired NotHeldReason = "expired"
	// NotHeldNotOwner: the key is held under a different lease.
	NotHeldNotOwner NotHeldReason = "not_owner"
)

// NotHeldError is returned by Release and Extend when the lease is not
// held. It matches [ErrNotHeld] with errors.Is.
type NotHeldError struct {
	// Reason tells the cases apart, for telemetry; callers normally only
	// test errors.Is(err, ErrNotHeld).
	Reason NotHeldReason
}

// Error implements error.
func (e *NotHeldError) Error() string {
	return ErrNotHeld.Error() + " (" + string(e.Reason) + ")"
}

// Is reports whether target is ErrNotHeld.
func (e *NotHeldError) Is(target error) bool { return target == ErrNotHeld }

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

// InvalidArgument returns an *Error with CodeInvalidArgument for op. Backends
// use it to report bad input the same way this package does.
func InvalidArgument(op, msg string) *Error { return invalid(op, msg) }

// itoa formats n for messages without fmt.
func itoa(n int) string { return strconv.Itoa(n) }
