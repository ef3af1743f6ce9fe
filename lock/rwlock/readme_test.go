package rwlock_test

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

// Regions quoted by doc.go and docs/readwrite.md (testkit/readme checks
// them).

func exampleReadWrite(ctx context.Context, backend lock.Backend, serve, migrate func(context.Context, lock.Fence) error) error {
	// README: rwlock-doc
	err := rwlock.Read(ctx, backend, "config:tenant-7", func(ctx context.Context, l lock.Lease) error {
		return serve(ctx, l.Fence) // many readers at once, never beside a writer
	})

	err = rwlock.Write(ctx, backend, "config:tenant-7", func(ctx context.Context, l lock.Lease) error {
		return migrate(ctx, l.Fence) // alone; the key's highest fence yet
	}, lock.WithWait(time.Minute))
	// END README
	return err
}

func exampleHoldWrite(ctx context.Context, backend lock.Backend, rebuild func(context.Context, lock.Fence) error) error {
	// README: rwlock-hold
	held, l, release, err := rwlock.HoldWrite(ctx, backend, "schema:orders", lock.WithTTL(time.Minute))
	if err != nil {
		return err // lock.ErrLocked (CodeAcquisitionTimeout) if readers stayed
	}
	defer release() // idempotent: also frees the key if work panics

	if err := rebuild(held, l.Fence); err != nil { // held ends (lock.ErrLeaseLost) if the lease is lost
		return err
	}
	return release() // non-nil (lock.ErrLeaseLost) if the lease was lost
	// END README
}

// cache is a cache that keeps, per key, the highest fence it has seen.
type cache interface {
	// Put stores v computed under fence, unless a later fence wrote or
	// read the key: it then reports false.
	Put(key string, v []byte, fence lock.Fence) bool
}

func exampleStaleReader(ctx context.Context, backend lock.Backend, c cache, load func(context.Context) ([]byte, error)) error {
	// README: rwlock-reader-fence
	return rwlock.Read(ctx, backend, "config:tenant-7", func(ctx context.Context, l lock.Lease) error {
		v, err := load(ctx)
		if err != nil {
			return err
		}
		// A reader that stalled past its lease computed v before a later
		// writer wrote: the writer's higher fence makes the cache refuse it.
		c.Put("config:tenant-7", v, l.Fence)
		return nil
	})
	// END README
}

var _, _, _ = exampleReadWrite, exampleHoldWrite, exampleStaleReader
