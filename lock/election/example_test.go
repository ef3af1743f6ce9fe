package election_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// Every replica runs Lead with its own identity; one at a time runs fn.
// Cancelling the leader's context releases its term at once, so another
// replica leads without waiting for the TTL.
func ExampleLead() {
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

	ctx, stop := context.WithCancel(context.Background())
	err = election.Lead(ctx, b, "jobs:scheduler", "replica-1", func(ctx context.Context, term lock.Lease) error {
		l, err := election.LeaderOf(ctx, b, "jobs:scheduler")
		fmt.Println("leader:", l.Identity, "fence:", term.Fence, err)
		// Lead for as long as ctx lives; pass term.Fence with every write.
		stop() // here: step down at once
		<-ctx.Done()
		return nil
	}, election.WithTTL(10*time.Second))
	fmt.Println("stopped:", errors.Is(err, context.Canceled))
	// Output:
	// leader: replica-1 fence: 000000000000001 <nil>
	// stopped: true
}
