package gocronlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// ExampleNewLocker runs one job on two instances, each a gocron scheduler
// with a Locker on a Redis client of its own: the job runs once, with a
// fence, and the other instance skips it.
func ExampleNewLocker() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	var mu sync.Mutex
	var outcomes []string
	var wg sync.WaitGroup
	for range 2 { // two instances of a service
		wg.Add(1)
		backend, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
		if err != nil {
			log.Fatal(err)
		}
		locker, err := gocronlock.NewLocker(backend, gocronlock.WithWindow(30*time.Second))
		if err != nil {
			log.Fatal(err)
		}
		s, err := gocron.NewScheduler(gocron.WithDistributedLocker(locker))
		if err != nil {
			log.Fatal(err)
		}
		defer s.Shutdown()
		task := gocron.NewTask(func(ctx context.Context) {
			lease, _ := lock.LeaseFrom(locker.Held(ctx)) // pass lease.Fence with the job's writes
			mu.Lock()
			outcomes = append(outcomes, fmt.Sprintf("ran with a fence: %t", lease.Fence != ""))
			mu.Unlock()
		})
		_, err = s.NewJob(gocron.OneTimeJob(gocron.OneTimeJobStartImmediately()), task,
			gocron.WithName("report"),
			gocron.WithEventListeners(
				gocron.AfterJobRuns(func(_ uuid.UUID, _ string) { wg.Done() }),
				gocron.AfterLockError(func(_ uuid.UUID, _ string, err error) {
					mu.Lock()
					outcomes = append(outcomes, fmt.Sprintf("skipped: %t", errors.Is(err, lock.ErrLocked) || errors.Is(err, gocronlock.ErrDone)))
					mu.Unlock()
					wg.Done()
				})))
		if err != nil {
			log.Fatal(err)
		}
		s.Start()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	fmt.Println(len(outcomes), "outcomes; runs:", count(outcomes, "ran with a fence: true"), "skips:", count(outcomes, "skipped: true"))
	// Output: 2 outcomes; runs: 1 skips: 1
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// ExampleNewElector runs the jobs of a scheduler on the elected leader
// only: IsLeader answers from the term the Elector holds, and LeaderOf
// tells who leads.
func ExampleNewElector() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	backend, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	if err != nil {
		log.Fatal(err)
	}
	elector, err := gocronlock.NewElector(backend, "scheduler:reports", "instance-1")
	if err != nil {
		log.Fatal(err)
	}
	if err := elector.Start(context.Background()); err != nil {
		log.Fatal(err)
	}
	defer elector.Stop() // hands the term over at once
	for elector.IsLeader(context.Background()) != nil {
		time.Sleep(time.Millisecond)
	}
	leader, err := election.LeaderOf(context.Background(), backend, "scheduler:reports")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("leader:", leader.Identity)

	s, err := gocron.NewScheduler(gocron.WithDistributedElector(elector))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Shutdown()
	ran := make(chan lock.Fence, 1)
	_, err = s.NewJob(gocron.OneTimeJob(gocron.OneTimeJobStartImmediately()), gocron.NewTask(func() {
		term, _ := elector.Lease() // the term's fence, for the job's writes
		ran <- term.Fence
	}))
	if err != nil {
		log.Fatal(err)
	}
	s.Start()
	fmt.Println("ran under the leader's term:", <-ran == leader.Fence)
	// Output:
	// leader: instance-1
	// ran under the leader's term: true
}
