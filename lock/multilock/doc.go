// Package multilock takes several keys at once, all or none, each with its
// own fence.
//
// A transfer between two accounts, or a merge of two documents, needs both
// keys before it starts. Taking them one by one with nested lock.Do calls
// deadlocks when two callers take the same keys in opposite orders. Do takes
// them all, in one canonical order, and releases them together:
//
//	err := multilock.Do(ctx, backend, []string{"{acct}:1", "{acct}:2"}, func(ctx context.Context, leases []lock.Lease) error {
//		// leases[i] holds keys[i]; pass each key's fence with its writes.
//		return store.Transfer(ctx, 1, 2, amount, leases[0].Fence, leases[1].Fence)
//	})
//
// Each key's lease is a plain lease: a lock.Do on one of the keys waits for
// it, and its fence comes from that key's counter. The leases are kept
// alive together, and the function's context ends with a cause matching
// lock.ErrLeaseLost as soon as any of them is lost. Do and Hold take the
// options of lock.Do (lock.WithTTL, lock.WithWait, lock.WithRetry,
// lock.WithHeartbeat, ...), except those about one key's lease
// (lock.WithLimit, lock.WithLease, lock.WithReleaseFunc, lock.WithWatch),
// which are an InvalidArgument error.
//
// On a Backend of this package, such as redisbackend's, keys of one group
// (on Redis Cluster, keys that share a hash tag; on one Redis, all keys) are
// taken in one step and released in one round trip. Other backends need only
// lock.IDBackend: their keys are taken one by one, in the same order.
// docs/multikey.md has the guarantees and when to use it.
package multilock
