// Package lockdriver is for code that implements lock.Backend, as
// database/sql/driver is for database drivers: what the contract asks of
// a backend, as functions.
//
// A backend checks its input before any I/O:
//
//	key, err := lockdriver.NormalizeKey(key) // NFC, at most MaxKeyBytes
//	if err != nil {
//		return lock.Lease{}, err // an InvalidArgument *lock.Error
//	}
//
// It then makes lock ids with NewLockID, fences with FormatFence, and
// returns a *NotHeldError from a Release of a lease that is gone.
//
// lockdriver does no I/O. Package lock/locktest is the conformance suite
// a backend runs; docs/backends.md walks through writing one.
package lockdriver
