// Package lockdriver is for code that implements lock.Backend, as
// database/sql/driver is for drivers.
//
// A backend checks its input before any I/O:
//
//	key, err := lockdriver.NormalizeKey(key) // NFC, at most MaxKeyBytes
//	if err != nil {
//		return lock.Lease{}, err // an InvalidArgument *lock.Error
//	}
//
// lock/locktest is the conformance suite; docs/backends.md walks through
// writing a backend.
package lockdriver
