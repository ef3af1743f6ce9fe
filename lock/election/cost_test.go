package election_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// commandRate returns a function measuring the commands per second srv
// processes over window, less its own INFO.
func commandRate(t testing.TB, rdb *redis.Client) func(window time.Duration) float64 {
	total := func() int64 {
		info, err := rdb.Info(context.Background(), "stats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "total_commands_processed:"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
		t.Fatal("no total_commands_processed in INFO stats")
		return 0
	}
	return func(window time.Duration) float64 {
		before := total()
		time.Sleep(window)
		return float64(total()-before-1) / window.Seconds() // the first INFO counted
	}
}

// TestElectionIdleCost: 100 observers and 10 candidates on 10 Backends
// (each on a client of its own) cost Redis next to nothing while the
// leader keeps its term: commands per second with them within 1/s of the
// leader's alone.
func TestElectionIdleCost(t *testing.T) {
	if testing.Short() {
		t.Skip("measures over two 4s windows")
	}
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	const key = "leader:cost"
	ttl := election.WithTTL(3 * time.Second)
	const window = 4 * time.Second
	hb, rate := alignedRate(t, srv)
	terms := make(chan started, 10)
	leader := newBackends(t, srv, prefix, 1)[0]
	runCandidate(t, leader, key, "leader", terms, ttl, hb)
	lead := next(t, terms, 10*time.Second)
	time.Sleep(time.Second)
	before := rate(window)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	more := newBackends(t, srv, prefix, 10)
	for i, b := range more {
		runCandidate(t, b, key, "candidate-"+strconv.Itoa(i), terms, ttl)
	}
	recs := observeAll(t, ctx, more, key, 10)
	inQueue := queued(t, srv, prefix, key)
	waitFor(t, 10*time.Second, "10 candidates queued", func() bool { return inQueue() == 10 })
	waitFor(t, 10*time.Second, "every observer sees the leader", func() bool {
		for _, r := range recs {
			if got := r.snapshot(); len(got) != 1 || got[0].Fence != lead.term.Fence {
				return false
			}
		}
		return true
	})
	time.Sleep(time.Second)
	after := rate(window)
	t.Logf("commands/s: leader alone %.2f; with 100 observers and 10 candidates %.2f", before, after)
	if after > before+1 {
		t.Errorf("idle observers and candidates cost %.2f commands/s more, want at most 1", after-before)
	}
	select {
	case s := <-terms:
		t.Errorf("%s took a term while the leader held it", s.who)
	default:
	}
	lead.ended <- nil // hand over, so the cleanup's cancels find terms to end
}

// alignedRate returns the leader's heartbeat option (one extension a
// second) and a rate measurement whose window starts half a heartbeat
// after an extension, so that it holds exactly as many of the leader's
// heartbeats as seconds.
func alignedRate(t testing.TB, srv *redistest.Server) (election.Option, func(window time.Duration) float64) {
	extended := make(chan struct{}, 1)
	hb := election.WithHeartbeat(lock.Heartbeat{Interval: time.Second, OnExtend: func(time.Time) {
		select {
		case extended <- struct{}{}:
		default:
		}
	}})
	measure := commandRate(t, srv.Client(t))
	return hb, func(window time.Duration) float64 {
		select {
		case <-extended:
		default:
		}
		<-extended
		time.Sleep(500 * time.Millisecond)
		return measure(window)
	}
}
