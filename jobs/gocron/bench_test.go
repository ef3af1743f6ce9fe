package gocronlock_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// BenchmarkLocker measures what the Locker costs a run of a job, on one
// client of the shared redis-server, and reports round trips per run:
//   - run: the instance that runs the scheduled time (Lock, Unlock with
//     the run's record), a job name per iteration;
//   - busy: an instance whose Lock finds the job running elsewhere;
//   - done: an instance whose Lock finds the scheduled time done;
//   - no-window: Lock and Unlock with WithWindow(0), one job name.
func BenchmarkLocker(b *testing.B) {
	srv := redistest.Shared(b)
	rc := srv.Client(b)
	cmds := redistest.Count(rc)
	backend, err := redisbackend.New(rc, &redisbackend.Options{Prefix: redistest.Prefix(b),
		FenceStripes: redisbackend.DefaultFenceStripes, DisableConfigRecord: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	l := newLocker(b, backend, gocronlock.WithWindow(time.Minute))
	held, err := l.Lock(ctx, "running")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = held.Unlock(ctx) })
	done, err := l.Lock(ctx, "done")
	if err != nil {
		b.Fatal(err)
	}
	_ = done.Unlock(ctx)
	cases := []struct {
		name string
		l    *gocronlock.Locker
		job  func(run string, i int) string
		want error
	}{
		{"run", l, func(run string, i int) string { return "job-" + run + "-" + strconv.Itoa(i) }, nil},
		{"busy", l, func(string, int) string { return "running" }, lock.ErrLocked},
		{"done", l, func(string, int) string { return "done" }, gocronlock.ErrDone},
		{"no-window", newLocker(b, backend, gocronlock.WithWindow(0)), func(string, int) string { return "plain" }, nil},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cmds.RoundTrips.Load()
			run, i := strconv.FormatInt(time.Now().UnixNano(), 36), 0 // new job names on every -count
			for b.Loop() {
				i++
				r, err := c.l.Lock(ctx, c.job(run, i))
				if !errors.Is(err, c.want) {
					b.Fatalf("Lock: got %v, want %v", err, c.want)
				}
				if err == nil {
					_ = r.Unlock(ctx)
				}
			}
			b.ReportMetric(float64(cmds.RoundTrips.Load()-start)/float64(b.N), "round-trips/op")
		})
	}
}
