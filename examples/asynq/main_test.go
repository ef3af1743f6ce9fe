package main

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
	"github.com/syncguard-go/syncguard/examples/internal/demotest"
	"github.com/syncguard-go/syncguard/lock"
)

func TestDemo(t *testing.T) {
	got := demotest.Run(t, 30*time.Second, run)
	// Striped fence counters start near the server's time in ms.
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`sending invoice 42 \(fence \d{15}\)`),
		regexp.MustCompile(`sending invoice 43 \(fence \d{15}\)`),
		regexp.MustCompile(`Done: 2 ran, 6 dropped \(already sent\)`),
		regexp.MustCompile(`Reports: 12 done, peak [12] running at once \(limit 2\)`),
		regexp.MustCompile(`cancelling replica-\d's context: it hands the term over`),
		regexp.MustCompile(`Ticks: \d+, each enqueued once, none missing`),
		regexp.MustCompile(`Unique: 1 of 3 producers enqueued, 2 refused`),
		regexp.MustCompile(`While it runs: asynqlock: duplicate task: task "asynqlock-unique:[0-9a-f]{32}:1"`),
		regexp.MustCompile(`Once it is done: <nil> \(enqueued again\)`),
	} {
		if !want.MatchString(got) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "sending invoice"); n != 2 {
		t.Errorf("invoices sent: got %d, want 2; output:\n%s", n, got)
	}
	if n := strings.Count(got, "building report-"); n != reportBatch {
		t.Errorf("reports built: got %d, want %d; output:\n%s", n, reportBatch, got)
	}
	for _, m := range regexp.MustCompile(`\((\d+) running\)`).FindAllStringSubmatch(got, -1) {
		if n, _ := strconv.Atoi(m[1]); n > reportLimit {
			t.Errorf("a report was built with %d running, limit %d; output:\n%s", n, reportLimit, got)
		}
	}
}

// TestReportsFailOverTheLimit: with a backend that grants more slots than
// asked for, more than 2 reports run at once and the demo says so.
func TestReportsFailOverTheLimit(t *testing.T) {
	ctx := demotest.Context(t, 30*time.Second)
	var out bytes.Buffer
	err := demorun.RunBroken(ctx, &out, func(b lock.Backend) lock.Backend { return loose{b.(lock.IDBackend)} },
		func(ctx context.Context, env *demorun.Env) error {
			s, err := reports(ctx, env)
			if err != nil {
				return err
			}
			return checkReports(s)
		})
	if err == nil || !strings.Contains(err.Error(), "report jobs ran at once, limit 2") {
		t.Errorf("run with a loose limit: %v, want the peak reported; output:\n%s", err, &out)
	}
}

// loose is a lock.IDBackend that grants 4 more slots than asked for,
// whether a caller attempts or waits in the queue.
type loose struct{ lock.IDBackend }

func (l loose) AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (lock.Lease, error) {
	return l.IDBackend.AcquireSlot(ctx, key, id, n+4, ttl)
}

func (l loose) Join(key, id string, n int, ttl, wait time.Duration) (lock.Waiter, error) {
	if n > 0 { // 0 is the lock
		n += 4
	}
	return l.IDBackend.Join(key, id, n, ttl, wait)
}

// TestCheckTicksFails: a tick enqueued twice, or a tick missing, fails the
// scheduler part.
func TestCheckTicksFails(t *testing.T) {
	base := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		desc   string
		counts map[time.Time]int
		want   string
	}{
		{"twice", map[time.Time]int{base: 1, base.Add(time.Second): 2}, "09:00:01 enqueued 2 times"},
		{"missing", map[time.Time]int{base: 1, base.Add(2 * time.Second): 1}, "no tick from 09:00:00 to 09:00:02"},
	} {
		var out bytes.Buffer
		if err := checkTicks(&out, tc.counts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.desc, err, tc.want)
		}
	}
	var out bytes.Buffer
	if err := checkTicks(&out, map[time.Time]int{base: 1, base.Add(time.Second): 1}); err != nil {
		t.Errorf("every tick once: got %v, want nil", err)
	}
}
