package election_test

import (
	"context"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// funcWrapper is a Backend wrapper that is a struct value holding a func
// in an interface field: its type is comparable, its values are not
// (comparing or hashing one panics).
type funcWrapper struct {
	*redisbackend.Backend
	tag any
}

// TestUnhashableWrapper: Lead, Observe, LeaderOf, lock.Do and lock.Keep
// work on a wrapper whose values cannot be map keys, without panicking.
func TestUnhashableWrapper(t *testing.T) {
	srv := redistest.Shared(t)
	b := funcWrapper{Backend: newBackends(t, srv, redistest.Prefix(t), 1)[0], tag: func() {}}
	const key = "leader:wrapped"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ch, err := election.Observe(ctx, b, key)
	if err != nil {
		t.Fatal(err)
	}
	<-ch // the current leader: nobody
	terms := make(chan started, 1)
	runCandidate(t, b, key, "a", terms, election.WithTTL(3*time.Second))
	s := next(t, terms, 10*time.Second)
	if l := <-ch; l.Fence != s.term.Fence {
		t.Errorf("Observe reported %+v, want a's term %s", l, s.term.Fence)
	}
	if l, err := election.LeaderOf(ctx, b, key); err != nil || l.Fence != s.term.Fence {
		t.Errorf("LeaderOf = %+v, %v; want a's term %s", l, err, s.term.Fence)
	}
	err = lock.Do(ctx, b, "wrapped:do", func(ctx context.Context, l lock.Lease) error {
		held, stop := lock.Keep(ctx, b, l)
		defer func() { _ = stop() }()
		return held.Err()
	})
	if err != nil {
		t.Errorf("lock.Do = %v", err)
	}
	s.ended <- nil
}
