// Package locktest is the conformance suite for lock.Backend
// implementations: every backend in this module, and any third-party one,
// runs it from its own tests.
//
//	func TestConformance(t *testing.T) {
//		locktest.Run(t, func(t *testing.T) lock.Backend {
//			return newIsolatedBackend(t) // e.g. a unique key prefix per subtest
//		})
//	}
//
// The suite checks, as subtests of the caller's test: mutual exclusion
// under heavy contention; ownership (a stale or foreign lease id cannot
// release or extend anything); expiry (a lapsed lease frees its key to a
// new holder with a higher fence); fences strictly increasing per key and
// independent across keys; Extend replacing the remaining time; the
// sanitised LookupKey/LookupID and IsLocked; InvalidArgument for every bad
// input; and Aborted (matching context.Canceled) for a cancelled context.
//
// Subtests run one after another, never in parallel, so an expiry function
// given with [WithExpiry] may act on a whole shared store. The suite takes
// a few seconds, most of it waiting for short leases to expire; use
// [WithExpiry] to advance a fake clock instead (miniredis: FastForward).
//
// Run uses only the methods of lock.Backend, so it checks any backend,
// with or without the optional extensions, and one wrapped by
// lock.WithHooks alike. A backend with concurrency limits (a
// [lock.IDBackend]) also calls [RunLimit] from a test of its own, with
// the same factory and options as Run. It checks that at most n goroutines
// hold one of a key's n slots at once, expiry, ownership, fences,
// validation, lookups, the separation of locks and limits on one key,
// per-call limits and keep-alive (see RunLimit). It is a separate call, not
// part of Run, so a backend opts in to it explicitly; every subtest of
// RunLimit fails on a backend that is not a lock.IDBackend.
//
// A backend with read-write locks (an [rwlock.Backend]) calls
// [RunReadWrite] the same way: readers sharing a key and a writer alone,
// fences from the key's counter, retry-safe attempts, release, extension
// and lookup by id, expiry, the three kinds of a key, and the queue's
// order (readers together, a waiting writer keeping new readers out).
//
// [BadInputs], [BadLimitInputs] and [BadReadWriteInputs] list the invalid
// calls the suites make, so a backend's own tests can prove they fail
// before any I/O.
//
// The suite uses only packages lock, lock/lockdriver and lock/rwlock and
// the standard library, so a backend outside this module runs it as is. Its keys start
// with "locktest/", never a key a backend reserves for itself.
package locktest
