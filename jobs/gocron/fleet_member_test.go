package gocronlock_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The fleet test runs this test binary as scheduler processes: TestMain
// calls fleetMember first, which runs one and exits when the environment
// asks for a member.
const (
	fleetAddrEnv   = "GOCRONLOCK_FLEET_ADDR"
	fleetPrefixEnv = "GOCRONLOCK_FLEET_PREFIX"
	fleetNameEnv   = "GOCRONLOCK_FLEET_NAME"
	fleetModeEnv   = "GOCRONLOCK_FLEET_MODE"   // "locker" or "elector"
	fleetJobEnv    = "GOCRONLOCK_FLEET_JOB"    // a key of fleetJobs
	fleetOffsetEnv = "GOCRONLOCK_FLEET_OFFSET" // the member's clock offset
	fleetWindowEnv = "GOCRONLOCK_FLEET_WINDOW"
	fleetTTLEnv    = "GOCRONLOCK_FLEET_TTL"
	// fleetSoakEnv, a duration, runs TestFleetSoak that long.
	fleetSoakEnv = "SYNCGUARD_GOCRON_SOAK"
)

// fleetKey is the elector's key and fleetJob the job's name.
const (
	fleetKey = "fleet"
	fleetJob = "fleet-job"
)

// fleetJobs are the jobs a member can run, by name, with their period.
var fleetJobs = map[string]struct {
	period time.Duration
	def    func() gocron.JobDefinition
}{
	"duration-1s": {time.Second, func() gocron.JobDefinition { return gocron.DurationJob(time.Second) }},
	"cron-1s":     {time.Second, func() gocron.JobDefinition { return gocron.CronJob("* * * * * *", true) }},
	"cron-2s":     {2 * time.Second, func() gocron.JobDefinition { return gocron.CronJob("*/2 * * * * *", true) }},
	"cron-1m":     {time.Minute, func() gocron.JobDefinition { return gocron.CronJob("* * * * *", false) }},
}

// fleetMember, in a member process, runs a gocron scheduler with a
// Locker or an Elector and one fast job on a clock offset as the
// environment says, until SIGTERM, printing a line per run:
// "run <its clock in unix ms> <fence or -> <wall clock in unix ns>".
func fleetMember() {
	addr := os.Getenv(fleetAddrEnv)
	if addr == "" {
		return
	}
	fail := func(msg ...any) { fmt.Println(msg...); os.Exit(2) }
	env := func(name string) time.Duration {
		d, err := time.ParseDuration(os.Getenv(name))
		if err != nil {
			fail(name, err)
		}
		return d
	}
	b, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: addr}), &redisbackend.Options{Prefix: os.Getenv(fleetPrefixEnv)})
	if err != nil {
		fail("redisbackend.New:", err)
	}
	clock := offsetClock{clockwork.NewRealClock(), env(fleetOffsetEnv)}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	s, fence, stopElector, err := memberScheduler(ctx, b, clock, env(fleetWindowEnv), env(fleetTTLEnv))
	if err != nil {
		fail("scheduler:", err)
	}
	job, ok := fleetJobs[os.Getenv(fleetJobEnv)]
	if !ok {
		fail("no job", os.Getenv(fleetJobEnv))
	}
	var mu sync.Mutex
	task := gocron.NewTask(func(ctx context.Context) {
		at, f := clock.Now(), fence(ctx)
		if f == "" {
			f = "-" // no lease: the check reports it
		}
		mu.Lock()
		fmt.Printf("run %d %s %d\n", at.UnixMilli(), f, time.Now().UnixNano())
		mu.Unlock()
		time.Sleep(10 * time.Millisecond) // a fast job
	})
	start := clock.Now().Truncate(job.period).Add(job.period)
	if _, err := s.NewJob(job.def(), task, gocron.WithName(fleetJob),
		gocron.WithStartAt(gocron.WithStartDateTime(start))); err != nil {
		fail("NewJob:", err)
	}
	s.Start()
	<-ctx.Done()
	if err := stopElector(); err != nil { // first, so the next leader takes over at once
		fail("Stop:", err)
	}
	_ = s.Shutdown()
	os.Exit(0)
}

// memberScheduler returns a scheduler on clock with a Locker or an
// Elector, the function giving a run's fence, and the one stopping the
// Elector.
func memberScheduler(ctx context.Context, b lock.Backend, clock clockwork.Clock, window, ttl time.Duration) (gocron.Scheduler, func(context.Context) lock.Fence, func() error, error) {
	opts := []gocron.SchedulerOption{gocron.WithClock(clock), gocron.WithLocation(time.UTC)}
	switch os.Getenv(fleetModeEnv) {
	case "locker":
		l, err := gocronlock.NewLocker(b, gocronlock.WithWindow(window), gocronlock.WithLockOptions(lock.WithTTL(ttl)))
		if err != nil {
			return nil, nil, nil, err
		}
		s, err := gocron.NewScheduler(append(opts, gocron.WithDistributedLocker(l))...)
		return s, func(ctx context.Context) lock.Fence {
			lease, _ := lock.LeaseFrom(l.Held(ctx))
			return lease.Fence
		}, func() error { return nil }, err
	case "elector":
		e, err := gocronlock.NewElector(b, fleetKey, os.Getenv(fleetNameEnv), election.WithTTL(ttl))
		if err != nil {
			return nil, nil, nil, err
		}
		if err := e.Start(ctx); err != nil {
			return nil, nil, nil, err
		}
		s, err := gocron.NewScheduler(append(opts, gocron.WithDistributedElector(e))...)
		return s, func(context.Context) lock.Fence {
			lease, _ := e.Lease()
			return lease.Fence
		}, e.Stop, err
	}
	return nil, nil, nil, fmt.Errorf("mode %q", os.Getenv(fleetModeEnv))
}

// itoa is strconv.Itoa, short.
func itoa(n int) string { return strconv.Itoa(n) }
