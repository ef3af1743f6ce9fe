// Package lockdriver is for code that builds on lock from outside it: the
// authors of a lock.Backend, as database/sql/driver is for drivers, and
// the adapters (middleware, job schedulers) that check their input and
// log keys as lock does.
//
// Both use InvalidArgument, the error of bad input before any I/O;
// NormalizeKey, a key's checks and NFC form; HashKey, what stands for a
// key or lock id in logs; and the defaults and checks of lock's options
// (DefaultTTL, ValidateOptions, ValidateLimit); Extension finds a
// backend's optional extension under its hooks. A backend also issues
// lock ids and fences (NewLockID, FormatFence), answers a lease not held
// with a NotHeldError, and tells the hooks of a hand-off (HandedOver).
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
