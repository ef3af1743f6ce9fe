package election_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// kinds is a lock.Hook counting the operations and events it sees.
type kinds struct {
	mu sync.Mutex
	n  map[lock.OpKind]int
}

func (k *kinds) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		k.mu.Lock()
		k.n[op.Kind]++
		k.mu.Unlock()
		return next(ctx, op)
	}
}

func (k *kinds) count(kind lock.OpKind) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n[kind]
}

// TestElectionHooked: on a backend wrapped by lock.WithHooks, the
// campaign is a wait (OpWait) whose hand-off the hooks see (OpGranted),
// each term an OpTerm, and the identity is still stored and read (the
// Store under the hooks).
func TestElectionHooked(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	rbs := newBackends(t, srv, prefix, 2)
	var hooks [2]*kinds
	var bs [2]lock.Backend
	for i := range bs {
		hooks[i] = &kinds{n: map[lock.OpKind]int{}}
		bs[i] = lock.WithHooks(rbs[i], hooks[i])
	}
	const key = "leader:hooked"
	ttl := election.WithTTL(30 * time.Second)
	terms := make(chan started, 10)
	inQueue := queued(t, srv, prefix, key)
	runCandidate(t, bs[0], key, "a", terms, ttl)
	a := next(t, terms, 10*time.Second)
	runCandidate(t, bs[1], key, "b", terms, ttl)
	waitFor(t, 10*time.Second, "b queued", func() bool { return inQueue() == 1 })
	if l, err := election.LeaderOf(context.Background(), bs[1], key); err != nil || l.Identity != "a" {
		t.Errorf("LeaderOf = %+v, %v; want a", l, err)
	}
	a.ended <- nil
	b := next(t, terms, 10*time.Second)
	if b.who != "b" || b.at.Sub(a.at) > 10*time.Second {
		t.Fatalf("%s leads %v after a's term began: want b by a hand-off", b.who, b.at.Sub(a.at))
	}
	if n := hooks[1].count(lock.OpGranted); n != 1 {
		t.Errorf("b's hooks saw %d OpGranted, want 1 (the hand-off)", n)
	}
	for i, h := range hooks {
		if h.count(lock.OpWait) < 1 || h.count(lock.OpTerm) != 1 {
			t.Errorf("hooks %d saw %d OpWait and %d OpTerm, want a wait and one term", i, h.count(lock.OpWait), h.count(lock.OpTerm))
		}
	}
	b.ended <- nil
}
