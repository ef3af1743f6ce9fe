// Package lock is the core of syncguard-go: distributed locks with fencing
// tokens, independent of any storage.
//
// [Do] acquires a key, runs a function under a context that is cancelled
// (cause [ErrLeaseLost]) if the lease is lost, keeps the lease alive
// meanwhile ([Keep]) and releases it. [Hold] does the same for work that
// does not fit in one function; [Acquire] only acquires. Every [Lease]
// carries a [Fence] that strictly increases per key, so a resource that
// rejects writes with a lower fence than it has seen is safe from a holder
// whose lease expired; [LeaseFrom] reads the lease from the context.
// [WithLimit] turns the lock into a limit of n holders.
//
// A [Backend] stores the leases; [IDBackend] and [Recorder] are its two
// optional extensions (docs/backends.md has the whole contract), and
// [WithHooks] observes one. Contention is [ErrLocked], a lease that is gone
// [ErrNotHeld], and system failures are [*Error] values with a [Code];
// nothing here formats a raw key into an error ([HashKey] is the hash to
// log instead).
package lock
