// Package lock is the core of syncguard-go: distributed locks with fencing
// tokens, independent of any storage.
//
// A [Backend] grants leases on keys. Every granted [Lease] carries a
// [Fence], a 15-digit token that strictly increases per key across grants,
// restarts and holders, so a resource that remembers the highest fence it
// has accepted can reject a write from a holder whose lease has already
// expired (the "stale holder" problem that TTL-based locks cannot avoid on
// their own).
//
// Most code uses [Do], which acquires with retry, keeps the lease alive by
// heartbeat while the work runs ([Keep]), cancels the work's context with
// cause [ErrLeaseLost] when the lease is lost, and always releases with a
// context of its own. [Hold] is the same without a callback: it returns
// the held context, the lease and an idempotent release function, for work
// that does not fit in one function. Both put the lease on the context, so
// code far from the lock reads its fence with [LeaseFrom].
//
// With [WithLimit](n) the same calls take one of n slots of a key instead
// of the lock: a concurrency limit ("at most 3 exports per user" across a
// fleet). A slot is an ordinary fenced Lease, kept alive, released and
// looked up like a lock; the backend must be an [IDBackend].
//
// Errors: contention is [ErrLocked] (as a [*LockedError] that carries the
// holder's expiry); releasing or extending a lease that is gone, expired or
// owned by someone else is [ErrNotHeld]; system failures are [*Error] values
// with a [Code]. Nothing in this package formats a raw key into an error.
//
// A backend is a [Backend], optionally an [IDBackend] and a [Recorder]
// (all three in backend.go); [WithHooks] observes one. The stored format
// shared with the TypeScript syncguard library (key normalisation, storage
// keys, lock ids, fence thresholds) is redisbackend's, in an internal
// package; [HashKey] is the hash both libraries log instead of keys and ids.
package lock
