// Package rwlock is a fenced read-write lock on any lock.Backend that
// offers one (redisbackend does): many readers or one writer per key,
// across a fleet.
//
// Read and Write read as lock.Do does, with lock's options; HoldRead and
// HoldWrite as lock.Hold:
//
//	err := rwlock.Read(ctx, backend, "config:tenant-7", func(ctx context.Context, l lock.Lease) error {
//		return serve(ctx, l.Fence) // many readers at once, never beside a writer
//	})
//
//	err = rwlock.Write(ctx, backend, "config:tenant-7", func(ctx context.Context, l lock.Lease) error {
//		return migrate(ctx, l.Fence) // alone; the key's highest fence yet
//	}, lock.WithWait(time.Minute))
//
// Every grant, a reader's or a writer's, is a lease with a fence from the
// key's counter, so a writer's fence is greater than every fence granted
// on the key before it: a store can refuse a write from a stale writer,
// and a cache a value that a stale reader computed before a later writer
// wrote. A writer that waits keeps new readers out, and waiters are served
// in the order they came: readers together, a writer alone. The lease is
// kept alive while fn runs, fn's context ends with a cause matching
// lock.ErrLeaseLost when it is lost, and lock.LeaseFrom reads it.
//
// A key is a lock, a limit or a read-write lock: while it is held as one,
// the others' calls fail with lock.ErrKindMismatch. docs/readwrite.md has
// the guarantees and their limits.
package rwlock
