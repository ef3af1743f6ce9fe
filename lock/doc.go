// Package lock takes distributed locks with fencing tokens.
//
// A lock protects a key, such as "invoice:42", across the processes of a
// fleet. Each grant is a [Lease] with a [Fence]: a number that grows with
// every grant of the key. A [Backend] stores the leases; redisbackend is
// one. Do is the one call most code needs:
//
//	err := lock.Do(ctx, backend, "invoice:42", func(ctx context.Context, l lock.Lease) error {
//		return store.UpdateInvoice(ctx, 42, l.Fence) // the store refuses older fences
//	})
//
// Do waits while the key is busy, keeps the lease alive while the
// function runs, and releases it afterwards. The function's context ends
// when the lease is lost. Hold does the same without a function, and
// Acquire only acquires.
//
// What a lock does not guarantee: a holder that stalls past its lease,
// in a GC pause or a suspended VM, may still write after the next holder
// has. Only the fence stops that write: pass it with each write and have
// the resource refuse a fence lower than the highest it has seen. A lease
// is also only as durable as the store: see docs/fences.md.
//
// docs/lock.md is the guide; docs/backends.md tells how to write a
// Backend, with package lock/lockdriver.
package lock
