package gocronlock_test

import (
	"context"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestFleetElector: three scheduler processes with an Elector run one
// job, their clocks offset from each other; the leader is killed twice,
// then stopped (SIGTERM). Only the leader runs the job: every run is
// under a term, one member's, and no run is under an older term than an
// earlier run's. The stopped leader hands over at once: the next term
// starts before the stopped one would have expired.
func TestFleetElector(t *testing.T) {
	t.Parallel()
	sc := scenario{mode: "elector", job: "duration-1s", offsets: ms(0, 400, 800), ttl: time.Second}
	runElectorFleet(t, sc, 1)
}

// leaderLog records what election.Observe reports on the fleet's key.
type leaderLog struct {
	mu    sync.Mutex
	terms []observed
}

type observed struct {
	election.Leader
	at time.Time
}

// runElectorFleet kills the leader twice and stops it once, every `every`
// periods, then checks the runs.
func runElectorFleet(t *testing.T, sc scenario, every int) {
	f := newFleet(t, sc)
	period := fleetJobs[sc.job].period
	b, err := redisbackend.New(redistest.Shared(t).Client(t), &redisbackend.Options{Prefix: f.prefix, DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, err := election.Observe(ctx, b, fleetKey)
	if err != nil {
		t.Fatal(err)
	}
	log := &leaderLog{}
	go func() {
		for l := range changes {
			log.mu.Lock()
			log.terms = append(log.terms, observed{l, time.Now()})
			log.mu.Unlock()
		}
	}()
	f.waitRun(time.Time{}, "", period+15*time.Second)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGKILL, syscall.SIGTERM} {
		time.Sleep(time.Duration(every)*period + period/3)
		old, err := election.LeaderOf(ctx, b, fleetKey)
		if err != nil {
			t.Fatal(err)
		}
		at := f.signalMember(old.Identity, sig)
		next := log.wait(t, old.Fence, sc.ttl+10*time.Second)
		took := next.at.Sub(at)
		t.Logf("%v: the leader %s (term %s): %s leads (term %s) %v later", sig, old.Identity, old.Fence, next.Identity, next.Fence, took.Round(time.Millisecond))
		if sig == syscall.SIGTERM && !next.at.Before(old.ExpiresAt) {
			t.Errorf("stopped leader: the next term started at %v, not before the stopped one's expiry %v: no hand-off",
				next.at.Format(time.StampMilli), old.ExpiresAt.Format(time.StampMilli))
		}
	}
	time.Sleep(period)
	f.stop()
	checkLeaderOnly(t, f.runs)
}

// wait returns the first term observed with a fence greater than after.
func (l *leaderLog) wait(t *testing.T, after lock.Fence, timeout time.Duration) observed {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l.mu.Lock()
		for _, o := range l.terms {
			if o.Fence != "" && o.Fence.Compare(after) > 0 {
				l.mu.Unlock()
				return o
			}
		}
		l.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no term after %s within %v", after, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkLeaderOnly fails when a run had no term, when two members ran
// under one term, or when a run's term is older than an earlier run's.
func checkLeaderOnly(t *testing.T, runs []fleetRun) {
	t.Helper()
	byFence := map[lock.Fence]string{}
	var latest fleetRun
	for _, r := range sortedByWall(runs) {
		switch {
		case r.fence == "":
			t.Errorf("%s ran at %v without a term", r.member, r.wall.Format(time.StampMilli))
		case byFence[r.fence] != "" && byFence[r.fence] != r.member:
			t.Errorf("term %s: runs by %s and %s", r.fence, byFence[r.fence], r.member)
		case latest.fence != "" && r.fence.Compare(latest.fence) < 0:
			t.Errorf("%s ran under term %s at %v, after %s ran under the newer term %s", r.member, r.fence,
				r.wall.Format(time.StampMilli), latest.member, latest.fence)
		}
		byFence[r.fence] = r.member
		if r.fence.Compare(latest.fence) >= 0 {
			latest = r
		}
	}
	t.Logf("%d runs under %d terms, each by its leader", len(runs), len(byFence))
}
