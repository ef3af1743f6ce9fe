package election_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// queued returns a function counting the waiters in key's queue.
func queued(t testing.TB, srv *redistest.Server, prefix, key string) func() int64 {
	p := strings.TrimRight(prefix, ":")
	rdb := srv.Client(t)
	return func() int64 {
		n, _ := rdb.ZCard(context.Background(), wire.QueueKey(p, p+":"+key)).Result()
		return n
	}
}

// TestElectionHandOff: a leader that resigns (fn returns nil), and then
// one whose context is cancelled, hand leadership to the oldest waiting
// candidate by a hand-off: the next term starts long before the 30s TTL
// could expire. Fences strictly increase.
func TestElectionHandOff(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	bs := newBackends(t, srv, prefix, 3)
	const key = "jobs:scheduler"
	ttl := election.WithTTL(30 * time.Second)
	terms := make(chan started, 10)
	inQueue := queued(t, srv, prefix, key)

	runCandidate(t, bs[0], key, "a", terms, ttl)
	first := next(t, terms, 10*time.Second)
	runCandidate(t, bs[1], key, "b", terms, ttl)
	waitFor(t, 10*time.Second, "b queued", func() bool { return inQueue() == 1 })
	runCandidate(t, bs[2], key, "c", terms, ttl)
	waitFor(t, 10*time.Second, "c queued", func() bool { return inQueue() == 2 })

	// Resign: the oldest candidate, b, leads next.
	resigned := time.Now()
	first.ended <- nil
	second := next(t, terms, 10*time.Second)
	if second.who != "b" {
		t.Fatalf("after a's resignation %s leads, want b", second.who)
	}
	t.Logf("hand-off after resign: %v", second.at.Sub(resigned))
	if d := second.at.Sub(resigned); d > 10*time.Second {
		t.Errorf("b led %v after a resigned: not a hand-off (TTL 30s)", d)
	}

	// a campaigned again, behind c. Cancel b: c leads next.
	waitFor(t, 10*time.Second, "a queued again", func() bool { return inQueue() == 2 })
	cancelled := time.Now()
	second.cancel()
	third := next(t, terms, 10*time.Second)
	if third.who != "c" {
		t.Fatalf("after b's cancel %s leads, want c", third.who)
	}
	t.Logf("hand-off after cancel: %v", third.at.Sub(cancelled))
	if d := third.at.Sub(cancelled); d > 10*time.Second {
		t.Errorf("c led %v after b's cancel: not a hand-off (TTL 30s)", d)
	}
	if !(first.term.Fence < second.term.Fence && second.term.Fence < third.term.Fence) {
		t.Errorf("fences %s, %s, %s: want strictly increasing", first.term.Fence, second.term.Fence, third.term.Fence)
	}
	third.ended <- nil // resign, so the cleanup's cancel finds the next term
}

// TestElectionTermLost: a term taken from its leader (its key deleted, as
// "syncguard release --force" does) ends fn's context with a cause
// matching lock.ErrLeaseLost; Lead campaigns again and the next term's
// fence is greater.
func TestElectionTermLost(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	bs := newBackends(t, srv, prefix, 1)
	const key = "leader:lost"
	terms := make(chan started, 10)
	runCandidate(t, bs[0], key, "a", terms, election.WithTTL(3*time.Second))
	first := next(t, terms, 10*time.Second)
	p := strings.TrimRight(prefix, ":")
	if err := srv.Client(t).Del(context.Background(), p+":"+key).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-first.ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the term's context did not end after its key was deleted")
	}
	if cause := context.Cause(first.ctx); !errors.Is(cause, lock.ErrLeaseLost) {
		t.Errorf("cause = %v, want ErrLeaseLost", cause)
	}
	second := next(t, terms, 10*time.Second)
	if second.term.Fence <= first.term.Fence {
		t.Errorf("fence %s after %s: want greater", second.term.Fence, first.term.Fence)
	}
	second.ended <- nil
}

// TestLeaderOf: the leader's identity and its term's fence; ErrNoLeader
// when nobody leads.
func TestLeaderOf(t *testing.T) {
	srv := redistest.Shared(t)
	bs := newBackends(t, srv, redistest.Prefix(t), 2)
	const key = "leader:of"
	ctx := context.Background()
	if _, err := election.LeaderOf(ctx, bs[1], key); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("LeaderOf(free) = %v, want ErrNoLeader", err)
	}
	terms := make(chan started, 10)
	runCandidate(t, bs[0], key, "node-7", terms, election.WithTTL(3*time.Second))
	s := next(t, terms, 10*time.Second)
	l, err := election.LeaderOf(ctx, bs[1], key)
	if err != nil || l.Identity != "node-7" || l.Fence != s.term.Fence || l.ExpiresAt.IsZero() {
		t.Errorf("LeaderOf = %+v, %v; want node-7 with fence %s", l, err, s.term.Fence)
	}
	s.cancel()
	waitFor(t, 10*time.Second, "no leader", func() bool {
		_, err := election.LeaderOf(ctx, bs[1], key)
		return errors.Is(err, election.ErrNoLeader)
	})
}

// plainBackend hides every extension of the Backend it wraps, and counts
// its Acquire calls.
type plainBackend struct {
	lock.Backend
	acquires *atomic.Int64
}

func (p plainBackend) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	p.acquires.Add(1)
	return p.Backend.Acquire(ctx, key, ttl)
}

// TestElectionPlainBackend: on a Backend with no extension (no queue, no
// notices, no identities), a candidate takes over when the leader's term
// ends, by reading the key at the term's expiry; LeaderOf has no identity.
func TestElectionPlainBackend(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	rbs := newBackends(t, srv, prefix, 2)
	pb := plainBackend{rbs[1], new(atomic.Int64)}
	bs := []lock.Backend{plainBackend{rbs[0], new(atomic.Int64)}, pb}
	const key = "leader:plain"
	ttl := election.WithTTL(2 * time.Second)
	terms := make(chan started, 10)
	runCandidate(t, bs[0], key, "a", terms, ttl)
	a := next(t, terms, 10*time.Second)
	runCandidate(t, bs[1], key, "b", terms, ttl)
	waitFor(t, 10*time.Second, "b's first attempt", func() bool { return pb.acquires.Load() > 0 })
	l, err := election.LeaderOf(context.Background(), bs[1], key)
	if err != nil || l.Identity != "" || l.Fence != a.term.Fence {
		t.Errorf("LeaderOf = %+v, %v; want a's fence, no identity", l, err)
	}
	cancelled := time.Now()
	a.cancel()
	b := next(t, terms, 10*time.Second)
	t.Logf("b leads %v after a's cancel (TTL 2s)", b.at.Sub(cancelled))
	if b.who != "b" || b.term.Fence <= a.term.Fence {
		t.Errorf("next term %s with fence %s after %s", b.who, b.term.Fence, a.term.Fence)
	}
	b.ended <- nil
}

// TestElectionServerPaused: a server paused past the term's TTL loses the
// term: fn's context ends with a cause matching lock.ErrLeaseLost, and
// once the server is back Lead is elected again with a greater fence.
func TestElectionServerPaused(t *testing.T) {
	srv := redistest.Start(t)
	bs := newBackends(t, srv, redistest.Prefix(t), 1)
	const key = "leader:paused"
	terms := make(chan started, 10)
	runCandidate(t, bs[0], key, "a", terms, election.WithTTL(time.Second))
	first := next(t, terms, 10*time.Second)
	srv.Pause(t)
	select {
	case <-first.ctx.Done():
	case <-time.After(10 * time.Second):
		srv.Resume(t)
		t.Fatal("the term's context did not end while the server was paused")
	}
	time.Sleep(time.Second) // past the term's expiry by the server's clock too
	srv.Resume(t)
	if cause := context.Cause(first.ctx); !errors.Is(cause, lock.ErrLeaseLost) {
		t.Errorf("cause = %v, want ErrLeaseLost", cause)
	}
	second := next(t, terms, 20*time.Second)
	if second.term.Fence <= first.term.Fence {
		t.Errorf("fence %s after %s: want greater", second.term.Fence, first.term.Fence)
	}
	second.ended <- nil
}

// TestElectionPanicReleases: a panic in fn, recovered by a supervisor
// while Lead's context lives on, releases the term and is raised again:
// another candidate leads long before the 30 s TTL.
func TestElectionPanicReleases(t *testing.T) {
	srv := redistest.Shared(t)
	bs := newBackends(t, srv, redistest.Prefix(t), 2)
	const key = "leader:panics"
	ttl := election.WithTTL(30 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	recovered := make(chan any, 1)
	go func() {
		defer func() { recovered <- recover() }()
		_ = election.Lead(ctx, bs[0], key, "a", func(context.Context, lock.Lease) error { panic("boom") }, ttl)
	}()
	select {
	case r := <-recovered:
		if r != "boom" {
			t.Fatalf("recovered %v, want Lead to raise fn's panic", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fn's panic did not leave Lead")
	}
	terms := make(chan started, 1)
	runCandidate(t, bs[1], key, "b", terms, ttl)
	s := next(t, terms, 10*time.Second)
	s.ended <- nil
}

// TestElectionStopBound: with the server stopped (SIGSTOP), a leader and a
// queued candidate whose contexts are cancelled return within about a
// second (stopTimeout), not after the release's and the notices' own
// timeouts.
func TestElectionStopBound(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.Prefix(t)
	bs := newBackends(t, srv, prefix, 2)
	const key = "leader:stopped-server"
	ttl := election.WithTTL(3 * time.Second)
	terms := make(chan started, 2)
	a := runCandidate(t, bs[0], key, "a", terms, ttl)
	first := next(t, terms, 10*time.Second)
	b := runCandidate(t, bs[1], key, "b", terms, ttl)
	waitFor(t, 10*time.Second, "b queued", func() bool { return queued(t, srv, prefix, key)() == 1 })
	time.Sleep(1200 * time.Millisecond) // an extension and its proclaim have run
	srv.Pause(t)
	defer srv.Resume(t)
	for _, c := range []struct {
		who string
		c   *candidate
	}{{"the leader", a}, {"the queued candidate", b}} {
		start := time.Now()
		c.c.cancel()
		select {
		case err := <-c.c.done:
			c.c.done <- err // for the cleanup
			t.Logf("%s's Lead returned %v after its context ended", c.who, time.Since(start))
			if took := time.Since(start); took > 2500*time.Millisecond {
				t.Errorf("%s's Lead returned %v after its context ended, want about 1s at most", c.who, took)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s's Lead did not return", c.who)
		}
	}
	_ = first
}
