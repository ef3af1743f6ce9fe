package redisbackend

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// releaseSpy is a hook that keeps the HandedTo of every release.
type releaseSpy struct {
	mu sync.Mutex
	to []lock.Fence
}

func (s *releaseSpy) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		err := next(ctx, op)
		if op.Kind == lock.OpRelease || op.Kind == lock.OpReleaseDone {
			s.mu.Lock()
			s.to = append(s.to, op.HandedTo)
			s.mu.Unlock()
		}
		return err
	}
}

func (s *releaseSpy) only(t *testing.T) lock.Fence {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.to) != 1 {
		t.Fatalf("%d releases seen, want 1", len(s.to))
	}
	return s.to[0]
}

// TestReleaseReportsHandOff: a release that hands the lock (or a slot) to
// a waiter tells its hooks the waiter's fence (lock.Op.HandedTo), whether
// the waiter is the releasing Backend's own (told from the reply) or
// another's (told by a message), for Release and ReleaseDone, through
// nested hooks too; a release nobody waits on tells nothing.
func TestReleaseReportsHandOff(t *testing.T) {
	srv := redistest.Shared(t)
	ctx := context.Background()
	for _, tt := range []struct {
		desc   string
		own    bool // the waiter is the holder's Backend's
		slot   bool
		done   bool // released with ReleaseDone
		nobody bool // nobody waits
	}{
		{desc: "another Backend's waiter"},
		{desc: "own waiter", own: true},
		{desc: "slot", slot: true},
		{desc: "release done", done: true},
		{desc: "nobody waits", nobody: true},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			prefix := redistest.Prefix(t)
			rdb := srv.Client(t)
			holder := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix})
			waiter := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix})
			if tt.own {
				waiter = holder
			}
			inner, outer := &releaseSpy{}, &releaseSpy{}
			hooked := lock.WithHooks(lock.WithHooks(holder, inner), outer)
			var opts []lock.Option
			if tt.slot {
				opts = []lock.Option{lock.WithLimit(1)}
			}
			l, err := lock.Acquire(ctx, holder, "hot", append(opts, lock.WithTTL(time.Minute))...)
			if err != nil {
				t.Fatal(err)
			}
			var res <-chan acquireResult
			if !tt.nobody {
				res = acquireAsync(ctx, waiter, "hot", append(append([]lock.Option{}, slowPolling...), opts...)...)
				waitFor(t, "the waiter's queue entry", 5*time.Second, func() bool { return queueLen(t, rdb, holder, "hot") == 1 })
			}
			if tt.done {
				err = hooked.(lock.Recorder).ReleaseDone(ctx, l, time.Minute)
			} else {
				err = hooked.Release(ctx, l.ID)
			}
			if err != nil {
				t.Fatal(err)
			}
			var want lock.Fence
			if !tt.nobody {
				r := <-res
				if r.err != nil {
					t.Fatalf("waiter: %v", r.err)
				}
				want = r.lease.Fence
				t.Cleanup(func() { _ = waiter.Release(ctx, r.lease.ID) })
			}
			if got := inner.only(t); got != want {
				t.Errorf("HandedTo = %q, want %q (the waiter's fence)", got, want)
			}
			if got := outer.only(t); got != want {
				t.Errorf("outer hook: HandedTo = %q, want %q", got, want)
			}
		})
	}
}
