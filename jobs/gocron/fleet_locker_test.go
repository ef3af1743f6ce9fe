package gocronlock_test

import (
	"os"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestFleetLocker: three scheduler processes with a Locker run one fast
// job, their clocks offset from each other, and the member of the latest
// run is killed twice (a member with its offset replaces it). Every
// scheduled time runs at most once, with fences growing from one to the
// next, and only the scheduled times a killed member may have held its
// lease through (TTL) are missing.
func TestFleetLocker(t *testing.T) {
	t.Parallel()
	for _, sc := range []scenario{
		// A DurationJob's times start at each member's whole second.
		{mode: "locker", job: "duration-1s", offsets: ms(0, 250, 500), window: 750 * time.Millisecond, ttl: 2 * time.Second},
		// A cron job with seconds: every second of each member's clock.
		{mode: "locker", job: "cron-1s", offsets: ms(0, 250, 500), window: 750 * time.Millisecond, ttl: 2 * time.Second},
	} {
		t.Run(sc.job, func(t *testing.T) {
			t.Parallel()
			runLockerFleet(t, sc, 2, 1)
		})
	}
}

// TestFleetSoak runs the minute cron job, with offsets spanning a second,
// for SYNCGUARD_GOCRON_SOAK (at least 3m), killing the member of the
// latest run twice, with a Locker and with an Elector; and a cron job of
// every 2s, offsets spanning a second, with a Locker.
func TestFleetSoak(t *testing.T) {
	soak, _ := time.ParseDuration(os.Getenv(fleetSoakEnv))
	if soak == 0 {
		t.Skip(fleetSoakEnv + " is not set")
	}
	t.Parallel()
	periods := max(3, int(soak/time.Minute))
	t.Run("locker", func(t *testing.T) {
		t.Parallel()
		sc := scenario{mode: "locker", job: "cron-1m", offsets: ms(-500, 0, 500), window: 30 * time.Second, ttl: 5 * time.Second}
		runLockerFleet(t, sc, 2, periods/3)
	})
	t.Run("locker-2s", func(t *testing.T) {
		t.Parallel()
		sc := scenario{mode: "locker", job: "cron-2s", offsets: ms(0, 500, 1000), window: 1500 * time.Millisecond, ttl: 2 * time.Second}
		runLockerFleet(t, sc, 2, int(soak/(6*time.Second)))
	})
	t.Run("elector", func(t *testing.T) {
		t.Parallel()
		sc := scenario{mode: "elector", job: "cron-1m", offsets: ms(-500, 0, 500), ttl: 5 * time.Second}
		runElectorFleet(t, sc, periods/3)
	})
}

// runLockerFleet kills the member of the latest run kills times, every
// `every` periods, then checks the runs.
func runLockerFleet(t *testing.T, sc scenario, kills, every int) {
	f := newFleet(t, sc)
	period := fleetJobs[sc.job].period
	f.waitRun(time.Time{}, "", period+15*time.Second)
	for range kills {
		time.Sleep(time.Duration(every)*period + period/3)
		name, at := f.signal(syscall.SIGKILL)
		f.waitRun(at, name, sc.ttl+2*period+10*time.Second)
	}
	time.Sleep(period)
	f.stop()
	checkOnce(t, f.runs, period, sc.ttl, kills)
}

// checkOnce fails when a scheduled time (a member's clock rounded to the
// period) ran more than once, when fences do not grow with the scheduled
// times, or when more times are missing than kills whose member held the
// lease to its TTL would explain.
func checkOnce(t *testing.T, runs []fleetRun, period, ttl time.Duration, kills int) {
	t.Helper()
	byTime := map[int64][]fleetRun{}
	members := map[string]bool{}
	for _, r := range runs {
		n := (r.at.UnixMilli() + period.Milliseconds()/2) / period.Milliseconds()
		byTime[n] = append(byTime[n], r)
		members[r.member] = true
	}
	var times []int64
	for n, rs := range byTime {
		times = append(times, n)
		if len(rs) > 1 {
			t.Errorf("scheduled time %v ran %d times: %+v", time.UnixMilli(n*period.Milliseconds()).Format(time.TimeOnly), len(rs), rs)
		}
	}
	if len(times) == 0 {
		t.Fatal("no runs")
	}
	slices.Sort(times)
	for i := 1; i < len(times); i++ {
		prev, cur := byTime[times[i-1]][0], byTime[times[i]][0]
		if cur.fence.Compare(prev.fence) <= 0 {
			t.Errorf("fence %s (%s) after %s (%s): want greater", cur.fence, cur.member, prev.fence, prev.member)
		}
	}
	missing := int(times[len(times)-1]-times[0]+1) - len(times)
	allowed := kills * (int(ttl/period) + 1)
	if missing > allowed {
		t.Errorf("%d scheduled times missing, want at most %d (%d kills, TTL %v)", missing, allowed, kills, ttl)
	}
	t.Logf("%d scheduled times ran once each, by %d members (%d kills), %d missing", len(times), len(members), kills, missing)
}

// ms returns the durations of the given milliseconds.
func ms(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for i, n := range v {
		out[i] = time.Duration(n) * time.Millisecond
	}
	return out
}
