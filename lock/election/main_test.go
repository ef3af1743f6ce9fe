package election_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMain runs a candidate process when asked (leadWorker), else the
// tests, and stops the package's shared redis-server after them.
func TestMain(m *testing.M) {
	leadWorker()
	redistest.Main(m)
}

// newBackends returns n Backends on srv, each on a client of its own
// (default options), under one prefix.
func newBackends(t testing.TB, srv *redistest.Server, prefix string, n int) []*redisbackend.Backend {
	t.Helper()
	bs := make([]*redisbackend.Backend, n)
	for i := range bs {
		b, err := redisbackend.New(srv.Client(t), &redisbackend.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		bs[i] = b
	}
	return bs
}

// started is one term as its fn saw it.
type started struct {
	who    string
	term   lock.Lease
	at     time.Time
	ctx    context.Context
	ended  chan error         // fn returns what is sent here
	cancel context.CancelFunc // cancels the Lead that won the term
}

// candidate runs Lead as who until its context is cancelled; each term is
// sent on terms and lasts until a value is sent on its ended channel (or
// its context ends, when fn returns the cause).
type candidate struct {
	cancel context.CancelFunc
	done   chan error
}

func runCandidate(t testing.TB, b lock.Backend, key, who string, terms chan<- started, opts ...election.Option) *candidate {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := &candidate{cancel: cancel, done: make(chan error, 1)}
	go func() {
		c.done <- election.Lead(ctx, b, key, who, func(ctx context.Context, term lock.Lease) error {
			s := started{who: who, term: term, at: time.Now(), ctx: ctx, ended: make(chan error, 1), cancel: cancel}
			terms <- s
			select {
			case err := <-s.ended:
				return err
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}, opts...)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-c.done; !errors.Is(err, context.Canceled) {
			t.Errorf("Lead(%s) = %v, want context.Canceled", who, err)
		}
	})
	return c
}

// next waits for the next term.
func next(t testing.TB, terms <-chan started, within time.Duration) started {
	t.Helper()
	select {
	case s := <-terms:
		return s
	case <-time.After(within):
		t.Fatalf("no term within %v", within)
		return started{}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// recorder collects what an Observe channel reports.
type recorder struct {
	mu  sync.Mutex
	got []election.Leader
}

func (r *recorder) run(ch <-chan election.Leader) {
	for l := range ch {
		r.mu.Lock()
		r.got = append(r.got, l)
		r.mu.Unlock()
	}
}

func (r *recorder) snapshot() []election.Leader {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]election.Leader(nil), r.got...)
}

// observeAll starts perBackend observers of key on each Backend, until
// ctx ends, and returns their recorders.
func observeAll[B lock.Backend](t testing.TB, ctx context.Context, bs []B, key string, perBackend int) []*recorder {
	t.Helper()
	var recs []*recorder
	for _, b := range bs {
		for range perBackend {
			ch, err := election.Observe(ctx, b, key)
			if err != nil {
				t.Fatal(err)
			}
			r := &recorder{}
			go r.run(ch)
			recs = append(recs, r)
		}
	}
	return recs
}

// allSeen reports whether every recorder has at least n reports.
func allSeen(recs []*recorder, n int) func() bool {
	return func() bool {
		for _, r := range recs {
			if len(r.snapshot()) < n {
				return false
			}
		}
		return true
	}
}

// redisbackend's Backend is an election Store.
var _ election.Store = (*redisbackend.Backend)(nil)
