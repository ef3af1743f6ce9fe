package lockdriver

import "github.com/syncguard-go/syncguard/lock"

// InvalidArgument returns the error of bad input to op: a *lock.Error with
// lock.CodeInvalidArgument. msg must not hold the key or lock id.
func InvalidArgument(op, msg string) *lock.Error {
	return &lock.Error{Code: lock.CodeInvalidArgument, Op: op, Msg: msg}
}

// NotHeldReason says why a lease is not held.
type NotHeldReason string

// The reasons a release or extend finds no lease to act on.
const (
	NotHeldNotFound NotHeldReason = "not_found" // no lease has that id
	NotHeldExpired  NotHeldReason = "expired"   // the lease expired
	NotHeldNotOwner NotHeldReason = "not_owner" // another lease holds the key
)

// NotHeldError is the error of Release and Extend for a lease not held.
// It matches lock.ErrNotHeld; its Reason is for telemetry.
type NotHeldError struct {
	Reason NotHeldReason
}

// Error implements error.
func (e *NotHeldError) Error() string {
	return lock.ErrNotHeld.Error() + " (" + string(e.Reason) + ")"
}

// Is reports whether target is lock.ErrNotHeld.
func (e *NotHeldError) Is(target error) bool { return target == lock.ErrNotHeld }
