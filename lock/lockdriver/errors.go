package lockdriver

import "github.com/syncguard-go/syncguard/lock"

// InvalidArgument returns a *lock.Error with lock.CodeInvalidArgument for
// op, so that a backend reports bad input the way package lock does. msg
// must not contain the key or lock id.
func InvalidArgument(op, msg string) *lock.Error {
	return &lock.Error{Code: lock.CodeInvalidArgument, Op: op, Msg: msg}
}

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

// NotHeldError is the error a backend's Release and Extend return when the
// lease is not held. It matches lock.ErrNotHeld with errors.Is; its Reason
// is for telemetry (otellock's outcomes).
type NotHeldError struct {
	Reason NotHeldReason
}

// Error implements error.
func (e *NotHeldError) Error() string {
	return lock.ErrNotHeld.Error() + " (" + string(e.Reason) + ")"
}

// Is reports whether target is lock.ErrNotHeld.
func (e *NotHeldError) Is(target error) bool { return target == lock.ErrNotHeld }
