package election_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestElectionObserve: several observers on several Backends see every
// change of leader once, in order: nobody, a, nobody (a cancelled with no
// candidate), b, c (b cancelled, c handed the term), nobody.
func TestElectionObserve(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	bs := newBackends(t, srv, prefix, 3)
	const key = "leader:observed"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	recs := observeAll(t, ctx, bs, key, 2)
	var want []election.Leader
	seen := func(what string) { t.Helper(); waitFor(t, 10*time.Second, what, allSeen(recs, len(want))) }
	want = append(want, election.Leader{})
	seen("the first report")

	ttl := election.WithTTL(30 * time.Second)
	terms := make(chan started, 10)
	runCandidate(t, bs[0], key, "a", terms, ttl)
	a := next(t, terms, 10*time.Second)
	want = append(want, election.Leader{Identity: "a", Fence: a.term.Fence})
	seen("a's term")
	a.cancel()
	want = append(want, election.Leader{})
	seen("a's end")

	runCandidate(t, bs[1], key, "b", terms, ttl)
	b := next(t, terms, 10*time.Second)
	want = append(want, election.Leader{Identity: "b", Fence: b.term.Fence})
	seen("b's term")
	inQueue := queued(t, srv, prefix, key)
	runCandidate(t, bs[2], key, "c", terms, ttl)
	waitFor(t, 10*time.Second, "c queued", func() bool { return inQueue() == 1 })
	b.cancel()
	c := next(t, terms, 10*time.Second)
	want = append(want, election.Leader{Identity: "c", Fence: c.term.Fence})
	seen("c's term")
	c.cancel()
	want = append(want, election.Leader{})
	seen("c's end")
	time.Sleep(500 * time.Millisecond) // room for a report too many

	for i, r := range recs {
		got := r.snapshot()
		for j := range got {
			got[j].ExpiresAt = time.Time{}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("observer %d saw %v, want %v", i, got, want)
		}
	}
}

// slowProclaim is a Store whose leaders proclaim their terms late.
type slowProclaim struct {
	*redisbackend.Backend
	delay time.Duration
}

// Proclaim proclaims after the delay.
func (s *slowProclaim) Proclaim(ctx context.Context, term lock.Lease, identity string) error {
	time.Sleep(s.delay)
	return s.Backend.Proclaim(ctx, term, identity)
}

// TestObserveWaitsForTheOwner: an observer that reads a new term before
// its leader proclaimed it (here 500 ms late, past the observer's re-reads)
// reports the term with its leader's identity, never without.
func TestObserveWaitsForTheOwner(t *testing.T) {
	srv := redistest.Shared(t)
	bs := newBackends(t, srv, redistest.Prefix(t), 2)
	const key = "leader:late-owner"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	terms := make(chan started, 1)
	runCandidate(t, &slowProclaim{Backend: bs[0], delay: 500 * time.Millisecond}, key, "a", terms, election.WithTTL(10*time.Second))
	waitFor(t, 10*time.Second, "a's term", func() bool { ok, _ := bs[1].IsLocked(ctx, key); return ok })
	ch, err := election.Observe(ctx, bs[1], key)
	if err != nil {
		t.Fatal(err)
	}
	s := next(t, terms, 10*time.Second)
	select {
	case l := <-ch:
		if l.Fence != s.term.Fence || l.Identity != "a" {
			t.Errorf("Observe reported %+v first, want a's term %s with its identity", l, s.term.Fence)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no report")
	}
	s.ended <- nil
}

// TestObserveIdentityWithNUL: an identity holding a NUL byte (valid
// UTF-8) reaches observers intact, as LeaderOf reads it.
func TestObserveIdentityWithNUL(t *testing.T) {
	srv := redistest.Shared(t)
	bs := newBackends(t, srv, redistest.Prefix(t), 2)
	const key, who = "leader:nul", "node-1\x00zone-b"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := election.Observe(ctx, bs[1], key)
	if err != nil {
		t.Fatal(err)
	}
	<-ch // nobody
	terms := make(chan started, 1)
	runCandidate(t, bs[0], key, who, terms, election.WithTTL(10*time.Second))
	s := next(t, terms, 10*time.Second)
	if l := <-ch; l.Identity != who {
		t.Errorf("Observe reported the identity %q, want %q", l.Identity, who)
	}
	if l, err := election.LeaderOf(ctx, bs[1], key); err != nil || l.Identity != who {
		t.Errorf("LeaderOf = %+v, %v; want the identity %q", l, err, who)
	}
	s.ended <- nil
}
