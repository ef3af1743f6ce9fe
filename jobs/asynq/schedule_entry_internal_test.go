package asynqlock

import (
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
)

// TestEntryTicks: "@every d" ticks at multiples of d since the Unix epoch
// wherever it starts, cron specs tick at their times in UTC, and a new
// term's catch-up takes the latest tick no older than TTL plus a period.
func TestEntryTicks(t *testing.T) {
	base := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	task := asynq.NewTask("t", nil)
	for _, tc := range []struct {
		desc, spec string
		now        time.Time
		next       time.Time
		period     time.Duration
	}{
		{"every 5s, mid-interval", "@every 5s", base.Add(3500 * time.Millisecond), base.Add(5 * time.Second), 5 * time.Second},
		{"every 5s, on a tick", "@every 5s", base.Add(5 * time.Second), base.Add(10 * time.Second), 5 * time.Second},
		{"every 7s, epoch multiples", "@every 7s", base, time.Unix((base.Unix()/7+1)*7, 0).UTC(), 7 * time.Second},
		{"every minute", "* * * * *", base.Add(time.Second), base.Add(time.Minute), time.Minute},
		{"daily at 9", "0 9 * * *", base, base.Add(-time.Hour).Add(24 * time.Hour), 24 * time.Hour},
		{"hourly descriptor", "@hourly", base.Add(time.Minute), base.Add(time.Hour), time.Hour},
	} {
		e, err := newEntry(tc.spec, task, nil, tc.now)
		if err != nil {
			t.Fatalf("%s: %v", tc.desc, err)
		}
		if got := e.next(tc.now); !got.Equal(tc.next) {
			t.Errorf("%s: next after %v: got %v, want %v", tc.desc, tc.now, got, tc.next)
		}
		if e.period != tc.period {
			t.Errorf("%s: period: got %v, want %v", tc.desc, e.period, tc.period)
		}
	}

	every, _ := newEntry("@every 1s", task, nil, base)
	ttl := 2 * time.Second
	if w := every.window(ttl); w != 3*time.Second {
		t.Errorf("window: got %v, want 3s", w)
	}
	if r := every.retention(ttl); r != 4*time.Second {
		t.Errorf("retention: got %v, want 4s", r)
	}
	withRet, _ := newEntry("@every 1s", task, []asynq.Option{asynq.Retention(time.Hour)}, base)
	if r := withRet.retention(ttl); r != time.Hour {
		t.Errorf("retention with asynq.Retention(1h): got %v, want 1h", r)
	}
	now := base.Add(10*time.Second + 400*time.Millisecond)
	if at, ok := every.latest(now.Add(-every.window(ttl)), now); !ok || !at.Equal(base.Add(10*time.Second)) {
		t.Errorf("catch-up at %v: got %v, %v, want %v", now, at, ok, base.Add(10*time.Second))
	}
	// After a stall of a day, the latest tick, not one a bounded walk reaches.
	if at, ok := every.latest(base, base.Add(24*time.Hour+300*time.Millisecond)); !ok || !at.Equal(base.Add(24*time.Hour)) {
		t.Errorf("every 1s, a day later: got %v, %v, want %v", at, ok, base.Add(24*time.Hour))
	}
	if _, ok := every.latest(base.Add(100*time.Millisecond), base.Add(900*time.Millisecond)); ok {
		t.Errorf("every 1s: a tick found within one second's fraction")
	}
	daily, _ := newEntry("0 9 * * *", task, nil, base)
	// A new deployment at 18:00: today's 9:00 is within TTL + one day,
	// yesterday's is not.
	evening := base.Add(8 * time.Hour)
	if at, ok := daily.latest(evening.Add(-daily.window(ttl)), evening); !ok || !at.Equal(base.Add(-time.Hour)) {
		t.Errorf("daily catch-up at %v: got %v, %v, want today's 9:00", evening, at, ok)
	}
	if _, ok := daily.latest(base.Add(-time.Hour+time.Second), base); ok {
		t.Errorf("daily: a tick found in a window without one")
	}
}

// FuzzNewEntry: any cronspec is either an entry whose id is stable and
// whose ticks move forward, or an InvalidArgument error; nothing panics.
func FuzzNewEntry(f *testing.F) {
	for _, s := range []string{"@every 1s", "*/5 * * * *", "0 9 * * 1-5", "CRON_TZ=Europe/Paris 0 9 * * *", "@daily", "0 0 30 2 *", "61 * * * *", "@every -1s", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	task := asynq.NewTask("t", nil)
	f.Fuzz(func(t *testing.T, spec string) {
		e, err := newEntry(spec, task, nil, now)
		if err != nil {
			if lock.CodeOf(err) != lock.CodeInvalidArgument {
				t.Fatalf("newEntry(%q): got %v, want InvalidArgument", spec, err)
			}
			return
		}
		if again, _ := newEntry(spec, task, nil, now.Add(time.Hour)); again.id != e.id {
			t.Fatalf("newEntry(%q): id %q then %q", spec, e.id, again.id)
		}
		if next := e.next(now); !next.After(now) || e.period <= 0 {
			t.Fatalf("newEntry(%q): next %v after %v, period %v", spec, next, now, e.period)
		}
	})
}
