package gocronlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestLockerRedisStall: three schedulers whose clocks are 0, 400 and
// 800 ms apart run a 10 ms job every 2 s with a 1.5 s window and the
// default TTL. Half a second after each scheduled time's first run, Redis
// is stopped (SIGSTOP) for 1.2 s: the instance on the latest clock fires
// the time during the stall, 0.8 s after the first run, and its call
// reaches Redis 1.7 s after it, past the window counted from when Redis
// saw the first run. The window counts from the firings, so every
// scheduled time still runs once, with growing fences, none missing.
func TestLockerRedisStall(t *testing.T) {
	t.Parallel()
	const (
		period = 2 * time.Second
		window = 1500 * time.Millisecond
		stall  = 1200 * time.Millisecond
		stalls = 4
	)
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	var (
		mu   sync.Mutex
		runs []fleetRun
		seen = make(chan fleetRun, 64)
	)
	for i, off := range ms(0, 400, 800) {
		name := "member-" + itoa(i+1)
		b, err := redisbackend.New(srv.Client(t), &redisbackend.Options{Prefix: prefix, DisableConfigRecord: true})
		if err != nil {
			t.Fatal(err)
		}
		l, err := gocronlock.NewLocker(b, gocronlock.WithWindow(window)) // the default TTL
		if err != nil {
			t.Fatal(err)
		}
		clock := offsetClock{clockwork.NewRealClock(), off}
		s, err := gocron.NewScheduler(gocron.WithClock(clock), gocron.WithLocation(time.UTC), gocron.WithDistributedLocker(l))
		if err != nil {
			t.Fatal(err)
		}
		start := clock.Now().Truncate(period).Add(period)
		_, err = s.NewJob(gocron.CronJob("*/2 * * * * *", true), gocron.NewTask(func(ctx context.Context) {
			lease, _ := lock.LeaseFrom(l.Held(ctx))
			r := fleetRun{member: name, at: clock.Now(), fence: lease.Fence, wall: time.Now()}
			mu.Lock()
			runs = append(runs, r)
			mu.Unlock()
			select {
			case seen <- r:
			default:
			}
			time.Sleep(10 * time.Millisecond)
		}), gocron.WithName("stall-job"), gocron.WithStartAt(gocron.WithStartDateTime(start)))
		if err != nil {
			t.Fatal(err)
		}
		s.Start()
		t.Cleanup(func() { _ = s.Shutdown() })
	}
	// A run, then the stall half a second later: the latest clock's firing
	// of the same time falls in it. The next stall waits for a run of a
	// later time than the last stalled one.
	var after time.Time
	for range stalls {
		var first fleetRun
		for first.wall.IsZero() || first.wall.Before(after) {
			select {
			case first = <-seen:
			case <-time.After(3 * period):
				t.Fatal("no run within 3 periods")
			}
		}
		time.Sleep(time.Until(first.wall.Add(500 * time.Millisecond)))
		srv.Pause(t)
		time.Sleep(stall)
		srv.Resume(t)
		after = first.wall.Add(period + period/2) // skip a time: the next stall is on a fresh one
	}
	time.Sleep(period)
	mu.Lock()
	defer mu.Unlock()
	checkOnce(t, runs, period, 30*time.Second, 0)
}

// TestLockerLate: a Lock that Redis answers later than the lease's TTL
// after it was called skips the run with ErrLate (the record of a run
// of its scheduled time may have expired meanwhile), and leaves the job
// free; the next firing runs.
func TestLockerLate(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	b, err := redisbackend.New(srv.Client(t), &redisbackend.Options{Prefix: redistest.Prefix(t), DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	l := newLocker(t, b, gocronlock.WithWindow(500*time.Millisecond), gocronlock.WithLockOptions(lock.WithTTL(time.Second)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Pause(t)
	got := make(chan error, 1)
	go func() {
		lk, err := l.Lock(ctx, "late")
		if err == nil {
			_ = lk.Unlock(ctx)
		}
		got <- err
	}()
	time.Sleep(1500 * time.Millisecond) // past the TTL, within go-redis's read timeout
	srv.Resume(t)
	if err := <-got; !errors.Is(err, gocronlock.ErrLate) {
		t.Fatalf("Lock answered after the TTL: got %v, want ErrLate", err)
	}
	lk, err := l.Lock(ctx, "late")
	if err != nil {
		t.Fatalf("the next Lock: %v", err)
	}
	if err := lk.Unlock(ctx); err != nil {
		t.Errorf("Unlock: %v", err)
	}
}
