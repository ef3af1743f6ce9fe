package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/examples/internal/demoredis"
	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The Locker part: the instances' clock offsets, the window (longer than
// their spread, shorter than the period), and how many scheduled times
// to watch.
var offsets = []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond}

const (
	window = 700 * time.Millisecond
	times  = 5
)

// jobRun is one run of the job: which instance, which scheduled time
// (its clock, rounded to the second), which fence.
type jobRun struct {
	instance string
	at       time.Time
	fence    lock.Fence
}

// lockerPart runs the instances until times scheduled times ran, and
// returns the runs. wrap, when not nil, wraps each instance's backend:
// tests break the lock with it.
func lockerPart(ctx context.Context, env *demorun.Env, wrap func(lock.Backend) lock.Backend) ([]jobRun, error) {
	prefix := demoredis.Prefix("gocronlock")
	fmt.Fprintf(env.Out, "Keys:  %s:*\n", prefix)
	w := &syncWriter{w: env.Out}
	runs := make(chan jobRun, 64)
	var scheds []gocron.Scheduler
	defer func() {
		w.mute()
		for _, s := range scheds {
			_ = s.Shutdown()
		}
	}()
	for i, off := range offsets {
		name := fmt.Sprintf("instance-%d", i+1)
		backend, err := redisbackend.New(redis.NewClient(env.Redis.Options()), &redisbackend.Options{Prefix: prefix})
		if err != nil {
			return nil, err
		}
		var b lock.Backend = backend
		if wrap != nil {
			b = wrap(b)
		}
		s, err := startInstance(b, name, offsetClock{clockwork.NewRealClock(), off}, w, runs)
		if err != nil {
			return nil, err
		}
		scheds = append(scheds, s)
		fmt.Fprintf(w, "  %s: clock %+dms\n", name, off.Milliseconds())
	}
	got, err := collect(ctx, runs)
	if err != nil {
		return nil, err
	}
	time.Sleep(window) // late instances have fired the last time
	for _, s := range scheds {
		_ = s.Shutdown() // waits for running jobs
	}
	scheds = nil
	for {
		select {
		case r := <-runs:
			got = append(got, r)
		default:
			return got, nil
		}
	}
}

// collect returns the runs until times scheduled times ran.
func collect(ctx context.Context, runs <-chan jobRun) ([]jobRun, error) {
	var got []jobRun
	seen := map[time.Time]bool{}
	timeout := time.After(times*time.Second + 5*time.Second)
	for len(seen) < times {
		select {
		case r := <-runs:
			got = append(got, r)
			seen[r.at] = true
		case <-timeout:
			return nil, fmt.Errorf("%d scheduled times ran within %v, want %d", len(seen), times*time.Second+5*time.Second, times)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return got, nil
}

// startInstance starts one instance's scheduler with a Locker on backend
// and the job "digest" every second of its clock.
func startInstance(backend lock.Backend, name string, clock clockwork.Clock, w io.Writer, runs chan<- jobRun) (gocron.Scheduler, error) {
	locker, err := gocronlock.NewLocker(backend, gocronlock.WithWindow(window))
	if err != nil {
		return nil, err
	}
	s, err := gocron.NewScheduler(gocron.WithDistributedLocker(locker), gocron.WithClock(clock), gocron.WithLocation(time.UTC))
	if err != nil {
		return nil, err
	}
	task := gocron.NewTask(func(ctx context.Context) {
		at := clock.Now().Round(time.Second)
		lease, _ := lock.LeaseFrom(locker.Held(ctx))
		fmt.Fprintf(w, "  %s ran the %s digest (fence %s)\n", name, at.Format(time.TimeOnly), lease.Fence)
		runs <- jobRun{name, at, lease.Fence}
		time.Sleep(5 * time.Millisecond) // a fast job
	})
	_, err = s.NewJob(gocron.CronJob("* * * * * *", true), task, gocron.WithName("digest"),
		gocron.WithEventListeners(gocron.AfterLockError(func(_ uuid.UUID, _ string, err error) {
			switch {
			case errors.Is(err, gocronlock.ErrDone):
				fmt.Fprintf(w, "    %s skipped it: ran within the window\n", name)
			case errors.Is(err, lock.ErrLocked):
				fmt.Fprintf(w, "    %s skipped it: running elsewhere\n", name)
			default:
				fmt.Fprintf(w, "    %s skipped it: %v\n", name, err)
			}
		})))
	if err != nil {
		return nil, err
	}
	s.Start()
	return s, nil
}

// checkOnce fails unless every scheduled time from the first to the last
// ran once, with fences growing from one to the next.
func checkOnce(w io.Writer, runs []jobRun) error {
	byTime := map[time.Time][]jobRun{}
	var at []time.Time
	for _, r := range runs {
		if byTime[r.at] == nil {
			at = append(at, r.at)
		}
		byTime[r.at] = append(byTime[r.at], r)
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	var bad []string
	for i, t := range at {
		if n := len(byTime[t]); n != 1 {
			bad = append(bad, fmt.Sprintf("%s ran %d times", t.Format(time.TimeOnly), n))
		}
		if i == 0 {
			continue
		}
		if t.Sub(at[i-1]) > time.Second {
			bad = append(bad, fmt.Sprintf("nothing ran from %s to %s", at[i-1].Format(time.TimeOnly), t.Format(time.TimeOnly)))
		}
		if byTime[t][0].fence.Compare(byTime[at[i-1]][0].fence) <= 0 {
			bad = append(bad, fmt.Sprintf("the %s run's fence is not greater than the one before", t.Format(time.TimeOnly)))
		}
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	fmt.Fprintf(w, "Scheduled times: %d, each ran once, none missing\n", len(at))
	return nil
}
