package asynqlock

import (
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
)

// TestEntryTicks: "@every d" ticks at multiples of d since the Unix epoch
// wherever it starts, cron specs tick at their times in UTC, and the
// latest tick of a window is found.
func TestEntryTicks(t *testing.T) {
	base := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	task := asynq.NewTask("t", nil)
	for _, tc := range []struct {
		desc, spec string
		now, next  time.Time
	}{
		{"every 5s, mid-interval", "@every 5s", base.Add(3500 * time.Millisecond), base.Add(5 * time.Second)},
		{"every 5s, on a tick", "@every 5s", base.Add(5 * time.Second), base.Add(10 * time.Second)},
		{"every 7s, epoch multiples", "@every 7s", base, time.Unix((base.Unix()/7+1)*7, 0).UTC()},
		{"every minute", "* * * * *", base.Add(time.Second), base.Add(time.Minute)},
		{"daily at 9", "0 9 * * *", base, base.Add(23 * time.Hour)},
		{"hourly descriptor", "@hourly", base.Add(time.Minute), base.Add(time.Hour)},
		{"weekdays at 9, from a Saturday", "0 9 * * 1-5", base, base.Add(47 * time.Hour)},
		{"leap day", "0 0 29 2 *", base, time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC)},
	} {
		e, err := newEntry(tc.spec, task, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.desc, err)
		}
		if got := e.next(tc.now); !got.Equal(tc.next) {
			t.Errorf("%s: next after %v: got %v, want %v", tc.desc, tc.now, got, tc.next)
		}
	}
	every, _ := newEntry("@every 1s", task, nil)
	now := base.Add(10*time.Second + 400*time.Millisecond)
	if at, ok := every.latest(now.Add(-3*time.Second), now); !ok || !at.Equal(base.Add(10*time.Second)) {
		t.Errorf("latest at %v: got %v, %v, want %v", now, at, ok, base.Add(10*time.Second))
	}
	if at, ok := every.latest(base, base.Add(24*time.Hour+300*time.Millisecond)); !ok || !at.Equal(base.Add(24*time.Hour)) {
		t.Errorf("every 1s, a day later: got %v, %v, want %v", at, ok, base.Add(24*time.Hour))
	}
	if _, ok := every.latest(base.Add(100*time.Millisecond), base.Add(900*time.Millisecond)); ok {
		t.Errorf("every 1s: a tick found within one second's fraction")
	}
	if n := every.missed(base, base.Add(5*time.Second)); n != 4 {
		t.Errorf("every 1s: missed between two ticks 5s apart: got %d, want 4", n)
	}
	daily, _ := newEntry("0 9 * * *", task, nil)
	if _, ok := daily.latest(base.Add(-time.Hour), base); ok {
		t.Errorf("daily: a tick found after its last one")
	}
}

// TestEntryRetentionFromTicks: how long a tick's task id and an entry's
// record are kept follows the spec's own ticks, whenever the entry was
// registered: for "1,2 * * * *", one minute after :01 and 59 after :02.
func TestEntryRetentionFromTicks(t *testing.T) {
	task := asynq.NewTask("t", nil)
	e, err := newEntry("1,2 * * * *", task, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at   time.Time
		want time.Duration
	}{
		{h.Add(time.Minute), time.Minute + retentionMargin},
		{h.Add(2 * time.Minute), 59*time.Minute + retentionMargin},
	} {
		if got := e.retention(tc.at); got != tc.want {
			t.Errorf("retention of the %v tick: got %v, want %v", tc.at.Format(time.TimeOnly), got, tc.want)
		}
	}
	ttl := 2 * time.Second
	if got, want := e.recordTTL(h.Add(2*time.Minute), h.Add(2*time.Minute), ttl), 59*time.Minute+DefaultCatchUp+ttl+retentionMargin; got != want {
		t.Errorf("record TTL after :02: got %v, want %v (until the next tick's catch-up ends)", got, want)
	}
	weekdays, _ := newEntry("0 9 * * 1-5", task, nil)
	friday := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	if got := weekdays.recordTTL(friday, friday, ttl); got < 72*time.Hour {
		t.Errorf("record TTL after Friday's 9:00: got %v, want past Monday's", got)
	}
}

// FuzzNewEntry: any cronspec is either an entry whose id is stable and
// whose ticks move forward, or an InvalidArgument error; nothing panics.
func FuzzNewEntry(f *testing.F) {
	for _, s := range []string{"@every 1s", "*/5 * * * *", "0 9 * * 1-5", "CRON_TZ=Europe/Paris 0 9 * * *", "@daily", "0 0 30 2 *", "61 * * * *", "@every -1s", "", "CRON_TZ=America/New_York 30 2 * * *"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	task := asynq.NewTask("t", nil)
	f.Fuzz(func(t *testing.T, spec string) {
		e, err := newEntry(spec, task, nil)
		if err != nil {
			if lock.CodeOf(err) != lock.CodeInvalidArgument {
				t.Fatalf("newEntry(%q): got %v, want InvalidArgument", spec, err)
			}
			return
		}
		if again, _ := newEntry(spec, task, []asynq.Option{asynq.MaxRetry(2)}); again.id != e.id {
			t.Fatalf("newEntry(%q): id %q then %q", spec, e.id, again.id)
		}
		if next := e.next(now); !next.IsZero() && !next.After(now) {
			t.Fatalf("newEntry(%q): next %v after %v", spec, next, now)
		}
	})
}

// TestSpecDST: 2026's transitions in three zones, one southern. A fixed
// time that the fall-back repeats runs once, at its first occurrence; one
// that the spring-forward skips runs once, as the clock jumps past it (ISC
// cron's rule). Wildcard specs run at every instant whose local time
// matches: twice through a repeated hour, never in a skipped one.
func TestSpecDST(t *testing.T) {
	utc := func(mo time.Month, d, h, m int) time.Time { return time.Date(2026, mo, d, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		desc, zone, spec string
		day              time.Time // the local date
		want             []time.Time
		count            int // for long lists: how many ticks, every gap the same
	}{
		{desc: "New York, fall-back, daily 01:30", zone: "America/New_York", spec: "30 1 * * *",
			day: utc(11, 1, 0, 0), want: []time.Time{utc(11, 1, 5, 30)}},
		{desc: "New York, spring-forward, daily 02:30 at 03:00", zone: "America/New_York", spec: "30 2 * * *",
			day: utc(3, 8, 0, 0), want: []time.Time{utc(3, 8, 7, 0)}},
		{desc: "New York, spring-forward, 02:00 and 02:45 in one run", zone: "America/New_York", spec: "0,45 2 * * *",
			day: utc(3, 8, 0, 0), want: []time.Time{utc(3, 8, 7, 0)}},
		{desc: "New York, the day after, daily 01:30", zone: "America/New_York", spec: "30 1 * * *",
			day: utc(11, 2, 0, 0), want: []time.Time{utc(11, 2, 6, 30)}},
		{desc: "New York, fall-back, wildcard minutes in 01:00", zone: "America/New_York", spec: "*/20 1 * * *",
			day: utc(11, 1, 0, 0), want: []time.Time{utc(11, 1, 5, 0), utc(11, 1, 5, 20), utc(11, 1, 5, 40), utc(11, 1, 6, 0), utc(11, 1, 6, 20), utc(11, 1, 6, 40)}},
		{desc: "New York, fall-back, half-hourly", zone: "America/New_York", spec: "0,30 * * * *",
			day: utc(11, 1, 0, 0), count: 50},
		{desc: "New York, spring-forward, half-hourly", zone: "America/New_York", spec: "0,30 * * * *",
			day: utc(3, 8, 0, 0), count: 46},
		{desc: "Berlin, fall-back, daily 02:30", zone: "Europe/Berlin", spec: "30 2 * * *",
			day: utc(10, 25, 0, 0), want: []time.Time{utc(10, 25, 0, 30)}},
		{desc: "Berlin, spring-forward, daily 02:30 at 03:00", zone: "Europe/Berlin", spec: "30 2 * * *",
			day: utc(3, 29, 0, 0), want: []time.Time{utc(3, 29, 1, 0)}},
		{desc: "Berlin, fall-back, hourly", zone: "Europe/Berlin", spec: "@hourly",
			day: utc(10, 25, 0, 0), count: 25},
		{desc: "Sydney, fall-back, daily 02:30", zone: "Australia/Sydney", spec: "30 2 * * *",
			day: utc(4, 5, 0, 0), want: []time.Time{utc(4, 4, 15, 30)}},
		{desc: "Sydney, spring-forward, daily 02:30 at 03:00", zone: "Australia/Sydney", spec: "30 2 * * *",
			day: utc(10, 4, 0, 0), want: []time.Time{utc(10, 3, 16, 0)}},
		{desc: "Sydney, spring-forward, hourly", zone: "Australia/Sydney", spec: "0 * * * *",
			day: utc(10, 4, 0, 0), count: 23},
	} {
		loc, err := time.LoadLocation(tc.zone)
		if err != nil {
			t.Skipf("time zone %s: %v", tc.zone, err)
		}
		sp, err := parseSpec("CRON_TZ=" + tc.zone + " " + tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.desc, err)
		}
		from := time.Date(tc.day.Year(), tc.day.Month(), tc.day.Day(), 0, 0, 0, 0, loc).Add(-time.Nanosecond)
		to := time.Date(tc.day.Year(), tc.day.Month(), tc.day.Day()+1, 0, 0, 0, 0, loc)
		var got []time.Time
		for at := sp.next(from); at.Before(to); at = sp.next(at) {
			got = append(got, at)
		}
		if tc.count > 0 {
			if len(got) != tc.count {
				t.Errorf("%s: got %d ticks, want %d: %v", tc.desc, len(got), tc.count, got)
			}
			for i := 2; i < len(got); i++ {
				if got[i].Sub(got[i-1]) != got[1].Sub(got[0]) {
					t.Errorf("%s: ticks %v, %v, %v: uneven", tc.desc, got[i-2], got[i-1], got[i])
				}
			}
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.desc, got, tc.want)
			continue
		}
		for i := range got {
			if !got[i].Equal(tc.want[i]) {
				t.Errorf("%s: tick %d: got %v, want %v", tc.desc, i, got[i], tc.want[i])
			}
		}
	}
}

// TestSpecEvery: "@every d" ticks at the exact multiples of d since the
// Unix epoch, d not rounded to seconds, whatever the time zone prefix.
func TestSpecEvery(t *testing.T) {
	from := time.Date(2026, 12, 7, 15, 0, 0, 300_000_000, time.UTC)
	for _, tc := range []struct {
		spec string
		d    time.Duration
	}{
		{"@every 1500ms", 1500 * time.Millisecond},
		{"@every 2500ms", 2500 * time.Millisecond},
		{"@every 1m30s", 90 * time.Second},
		{"CRON_TZ=Europe/Berlin @every 2500ms", 2500 * time.Millisecond},
		{"@every 1s", time.Second},
	} {
		sp, err := parseSpec(tc.spec)
		if err != nil {
			t.Fatalf("%q: %v", tc.spec, err)
		}
		at := sp.next(from)
		for i := range 5 {
			if at.UnixNano()%int64(tc.d) != 0 || !at.After(from) || at.Sub(from) > tc.d {
				t.Errorf("%q: tick %d after %v is %v: want the next multiple of %v", tc.spec, i, from, at, tc.d)
			}
			from, at = at, sp.next(at)
			if got := at.Sub(from); got != tc.d {
				t.Errorf("%q: ticks %v and %v are %v apart, want %v", tc.spec, from, at, got, tc.d)
			}
		}
	}
	for _, bad := range []string{"@every 0s", "@every -5s", "@every 500ms", "@every", "@every 1s 2s", "@every soon"} {
		if _, err := parseSpec(bad); err == nil {
			t.Errorf("%q: parsed, want an error", bad)
		}
	}
}
