package rwlock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// Readers share a key; a writer has it alone, with a fence above every
// reader's before it. A store that keeps the highest fence it saw per
// key refuses a write from a stale writer, and a cache refuses a value a
// reader computed before a later write.
func Example() {
	mr, err := miniredis.Run() // an embedded Redis; use a real one in production
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	b, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	if err != nil {
		panic(err)
	}
	defer b.Close()
	ctx := context.Background()

	err = rwlock.Read(ctx, b, "config:tenant-7", func(ctx context.Context, r1 lock.Lease) error {
		// A second reader joins while the first reads.
		return rwlock.Read(ctx, b, "config:tenant-7", func(ctx context.Context, r2 lock.Lease) error {
			fmt.Println("two readers:", r1.Fence, r2.Fence)
			return nil
		})
	})
	if err != nil {
		panic(err)
	}
	err = rwlock.Write(ctx, b, "config:tenant-7", func(ctx context.Context, w lock.Lease) error {
		l, _ := lock.LeaseFrom(ctx) // for code that has only the context
		fmt.Println("writer alone:", l.Fence)
		return nil
	}, lock.WithWait(time.Minute))
	fmt.Println("done:", err)
	// Output:
	// two readers: 000000000000001 000000000000002
	// writer alone: 000000000000003
	// done: <nil>
}
