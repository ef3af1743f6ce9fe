package multilock_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/multilock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// newBackend returns a Backend on an embedded Redis (miniredis); in
// production, redisbackend.New on your client.
func newBackend() (*redisbackend.Backend, func()) {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	b, err := redisbackend.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	return b, func() { _ = rdb.Close(); mr.Close() }
}

// A transfer takes both accounts, or neither. The shared hash tag {acct}
// keeps them in one slot on Redis Cluster: one script takes both.
func ExampleDo() {
	backend, stop := newBackend()
	defer stop()
	keys := []string{"{acct}:1", "{acct}:2"}
	err := multilock.Do(context.Background(), backend, keys, func(ctx context.Context, leases []lock.Lease) error {
		// ctx ends (cause lock.ErrLeaseLost) if any lease is lost. Pass each
		// account's fence with its write, so the store refuses a stale one.
		for _, l := range leases {
			fmt.Println(l.Key, l.Fence)
		}
		return nil
	})
	fmt.Println(err)
	// Output:
	// {acct}:1 000000000000001
	// {acct}:2 000000000000001
	// <nil>
}

// Each key of a multi-key lock is held as a plain lock is: a lock.Do on
// one of them finds it busy.
func ExampleHold() {
	backend, stop := newBackend()
	defer stop()
	ctx := context.Background()
	held, _, release, err := multilock.Hold(ctx, backend, []string{"doc:a", "doc:b"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer release()
	leases, _ := multilock.LeasesFrom(held) // for code that only has the context
	fmt.Println(len(leases), "leases")

	err = lock.Do(ctx, backend, "doc:b", func(context.Context, lock.Lease) error { return nil }, lock.WithWait(0))
	fmt.Println(errors.Is(err, lock.ErrLocked))
	// Output:
	// 2 leases
	// true
}
