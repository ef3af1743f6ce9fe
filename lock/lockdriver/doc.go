// Package lockdriver is for code that implements lock.Backend, or builds
// on package lock as an adapter does: what the contract in package lock
// asks of a backend, as functions, so that a backend outside this module
// implements it exactly as redisbackend does. It is named after
// database/sql/driver, the package a database driver imports.
//
// A backend validates its input before any I/O: [NormalizeKey] for keys
// (NFC, at most [MaxKeyBytes], no code point a newer JavaScript runtime
// would normalise differently), [ValidateLockID] for lock ids (22
// base64url characters, which [NewLockID] makes), [InvalidArgument] for
// the error. Its fences are [FenceDigits] wide ([FormatFence],
// [ParseFence]); a lease is live until [TimeTolerance] after its expiry;
// a release that is not held returns a [*NotHeldError]; a release that
// hands the lock to a queued waiter reports it with [HandedOver]; lookups
// hash keys and ids with [HashKey]. An adapter that passes lock options on
// checks them once with [ValidateOptions] and [ValidateLimit].
//
// lock/locktest is the conformance suite a backend runs in its tests;
// docs/backends.md walks through writing one.
package lockdriver
