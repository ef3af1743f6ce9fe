package lock

import (
	"errors"
	"strconv"
	"time"
)

// Sentinel errors. Test for them with errors.Is.
var (
	// ErrLocked is contention: another lease holds the key. Backends
	// return it as a [*LockedError].
	ErrLocked = errors.New("syncguard: locked")
	// ErrNotHeld: the lease is gone, expired, or someone else's.
	ErrNotHeld = errors.New("syncguard: lease not held")
	// ErrLeaseLost is the cause of a context that Keep, Do or Hold ended
	// because the lease was lost.
	ErrLeaseLost = errors.New("syncguard: lease lost")
	// ErrKindMismatch: a key is used as two of a lock, a limit of
	// [WithLimit] and a read-write lock (lock/rwlock). It comes inside an
	// InvalidArgument [*Error].
	ErrKindMismatch = errors.New("syncguard: the key is held as one kind (a lock, a concurrency limit or a read-write lock) and asked for as another")
	// ErrFuncPanicked is the outcome a [WithReleaseFunc] function gets
	// when Do's function panicked.
	ErrFuncPanicked = errors.New("syncguard: function panicked")
)

// LockedError is the contention error of Backend.Acquire; it matches
// [ErrLocked]. ExpiresAt is the holder's expiry when known, for a
// Retry-After hint.
type LockedError struct {
	ExpiresAt time.Time
}

// Error implements error.
func (e *LockedError) Error() string { return ErrLocked.Error() }

// Is reports whether target is ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Code classifies system failures, as the syncguard specification does.
type Code string

// The error codes.
const (
	CodeServiceUnavailable Code = "ServiceUnavailable" // the store is unreachable, loading or refusing work
	CodeAuthFailed         Code = "AuthFailed"         // the store rejected the credentials
	CodeInvalidArgument    Code = "InvalidArgument"    // bad input, or a command the store found malformed
	CodeRateLimited        Code = "RateLimited"        // the store asked the caller to slow down
	CodeNetworkTimeout     Code = "NetworkTimeout"     // the store did not answer in time
	CodeAcquisitionTimeout Code = "AcquisitionTimeout" // a wait gave up on a busy key; matches ErrLocked
	CodeAborted            Code = "Aborted"            // the caller's context ended; matches its error
	CodeInternal           Code = "Internal"           // an invariant broke: corrupt data, fence overflow
)

// Transient reports whether a failure with code c is worth another try:
// the store was unreachable, slow or busy. Every retry of this module
// uses it.
func (c Code) Transient() bool {
	switch c {
	case CodeServiceUnavailable, CodeNetworkTimeout, CodeRateLimited:
		return true
	}
	return false
}

// Error is a system failure. It never contains a raw key or lock id.
type Error struct {
	Code Code
	Op   string // the operation, such as "acquire" or "config"
	Msg  string // for people
	Err  error  // the underlying error, if any
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

// Is reports whether target is an *Error with the same Code, and the same
// Op when target's is set.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	return t.Code == e.Code && (t.Op == "" || t.Op == e.Op)
}

// CodeOf returns the Code of the first *Error in err's chain, or "".
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
