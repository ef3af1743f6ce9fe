package gocronlock_test

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
)

// The documentation's gocron snippets, kept compiling (they need a live
// Redis, so nothing calls them); testkit/readme checks that the
// documents quote the marked regions, joined, verbatim.

// README: gocron-locker
import gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"

// END README

// The package comment's snippet (doc.go).
func docGocron(backend lock.Backend, report func(context.Context, lock.Fence) error) error {
	// README: gocron-doc
	locker, err := gocronlock.NewLocker(backend, gocronlock.WithWindow(30*time.Second))
	if err != nil {
		return err
	}
	s, err := gocron.NewScheduler(gocron.WithDistributedLocker(locker))
	if err != nil {
		return err
	}
	_, err = s.NewJob(gocron.CronJob("*/5 * * * *", false), gocron.NewTask(func(ctx context.Context) error {
		lease, _ := lock.LeaseFrom(locker.Held(ctx)) // this run's fence
		return report(ctx, lease.Fence)
	}), gocron.WithName("report"))
	// END README
	if err == nil {
		s.Start()
	}
	return err
}

// The guide's Locker snippet.
func readmeGocronLocker(backend lock.Backend, store interface {
	SaveReport(ctx context.Context, fence lock.Fence) error
}) (gocron.Scheduler, error) {
	// README: gocron-locker
	// Every instance runs this scheduler; each scheduled time runs on one.
	locker, err := gocronlock.NewLocker(backend,
		gocronlock.WithWindow(30*time.Second),                 // > the clocks' spread, < the period
		gocronlock.WithLockOptions(lock.WithTTL(time.Minute)), // a crashed run blocks the job at most 1 min
	)
	if err != nil {
		return nil, err
	}
	s, err := gocron.NewScheduler(gocron.WithDistributedLocker(locker))
	if err != nil {
		return nil, err
	}
	_, err = s.NewJob(
		gocron.CronJob("*/5 * * * *", false),
		gocron.NewTask(func(ctx context.Context) error {
			ctx = locker.Held(ctx) // carries this run's lease; ends if it is lost
			lease, _ := lock.LeaseFrom(ctx)
			return store.SaveReport(ctx, lease.Fence) // the store refuses older fences
		}),
		gocron.WithName("reports:every-5-min"), // the lock's key: give every job a name
	)
	if err != nil {
		return nil, err
	}
	s.Start()
	// END README
	return s, nil
}

// The guide's Elector snippet.
func readmeGocronElector(backend lock.Backend, cleanup func(context.Context, lock.Fence) error) error {
	// README: gocron-elector
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	hostname, _ := os.Hostname()
	elector, err := gocronlock.NewElector(backend, "scheduler:billing", hostname,
		election.WithTTL(10*time.Second)) // a crashed leader's jobs resume within about 10s
	if err != nil {
		return err
	}
	if err := elector.Start(ctx); err != nil {
		return err
	}
	defer elector.Stop() // hands the term over at once: the next instance leads
	s, err := gocron.NewScheduler(gocron.WithDistributedElector(elector))
	if err != nil {
		return err
	}
	_, err = s.NewJob(gocron.DurationJob(time.Minute), gocron.NewTask(func(ctx context.Context) error {
		term, _ := elector.Lease() // the leader's term; its fence for the job's writes
		return cleanup(ctx, term.Fence)
	}))
	if err != nil {
		return err
	}
	s.Start()
	<-ctx.Done()
	return s.Shutdown()
	// END README
}

// The guide's observer snippet: who leads, from any process.
func readmeGocronObserve(ctx context.Context, backend lock.Backend, log func(string, ...any)) error {
	// README: gocron-observe
	leaders, err := election.Observe(ctx, backend, "scheduler:billing")
	if err != nil {
		return err
	}
	for l := range leaders {
		log("billing jobs run on", l.Identity, "term", l.Fence)
	}
	// END README
	return nil
}

// The README's gocron snippet.
func readmeGocronFront(backend lock.Backend, send func(context.Context, lock.Fence) error) error {
	// README: front-gocron
	locker, err := gocronlock.NewLocker(backend, gocronlock.WithWindow(30*time.Second)) // > clock spread, < period
	if err != nil {
		return err
	}
	s, err := gocron.NewScheduler(gocron.WithDistributedLocker(locker)) // on every instance
	if err != nil {
		return err
	}
	_, err = s.NewJob(gocron.CronJob("0 * * * *", false), gocron.NewTask(func(ctx context.Context) error {
		lease, _ := lock.LeaseFrom(locker.Held(ctx)) // one run per hour across instances, fenced
		return send(ctx, lease.Fence)
	}), gocron.WithName("digest:hourly"))
	// END README
	return err
}

// README: gocron-clock
// offsetClock is the real clock, off by offset: a machine whose clock is off.
type offsetClock struct {
	clockwork.Clock
	offset time.Duration
}

func (c offsetClock) Now() time.Time                  { return c.Clock.Now().Add(c.offset) }
func (c offsetClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c offsetClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// END README

// The guide's offset clock snippet: an instance whose clock is off.
func readmeGocronClock(locker *gocronlock.Locker) (gocron.Scheduler, error) {
	// README: gocron-clock
	// An instance whose clock is 800 ms ahead: it fires each scheduled time
	// 800 ms before an instance on the true clock.
	s, err := gocron.NewScheduler(
		gocron.WithClock(offsetClock{clockwork.NewRealClock(), 800 * time.Millisecond}),
		gocron.WithDistributedLocker(locker),
	)
	// END README
	return s, err
}
