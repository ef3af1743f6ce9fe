package redisbackend_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// A concurrency limit: at most 2 exports per user at once, across every
// process on the Redis. Each holder gets an ordinary lease (its own fence,
// kept alive by Hold); the third caller, asking without a wait, is refused
// with ErrLocked. (Embedded Redis here, so the example runs; in production
// a *redis.Client or *redis.ClusterClient.)
func Example_concurrencyLimit() {
	srv, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer client.Close()
	b, err := redisbackend.New(client, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()

	for i := 1; i <= 3; i++ {
		held, l, release, err := lock.Hold(ctx, b, "exports:user-7", lock.WithLimit(2), lock.WithWait(0))
		if errors.Is(err, lock.ErrLocked) {
			fmt.Println("export", i, "refused: 2 running")
			continue
		}
		if err != nil {
			log.Fatal(err)
		}
		defer release()
		_ = held // the export runs under held; pass l.Fence with its writes
		fmt.Println("export", i, "runs with fence", l.Fence)
	}
	info, _ := b.LookupLimit(ctx, "exports:user-7")
	fmt.Println(len(info.Holders), "of", info.Limit, "slots held")
	// Output:
	// export 1 runs with fence 000000000000001
	// export 2 runs with fence 000000000000002
	// export 3 refused: 2 running
	// 2 of 2 slots held
}
