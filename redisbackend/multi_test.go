package redisbackend_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/locktest"
	"github.com/syncguard-go/syncguard/lock/multilock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMultiRoundTrips: N keys of one slot take two round trips per cycle
// of multilock.Do, one script call to take them all and one pipeline to
// release them, whatever N, on one Redis and on Redis Cluster.
func TestMultiRoundTrips(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	counter := redistest.Count(client)
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableCoalescing: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx := context.Background()
	// The first cycle loads the scripts (NOSCRIPT, then EVAL or SCRIPT LOAD).
	for _, n := range []int{0, 1, 2, 8, multilock.MaxKeys} {
		keys := make([]string, max(n, 1))
		for i := range keys {
			keys[i] = "{acct}:" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		}
		before := counter.RoundTrips.Load()
		err := multilock.Do(ctx, b, keys, func(ctx context.Context, leases []lock.Lease) error {
			for i, l := range leases {
				if l.Key != keys[i] || l.Fence == "" {
					t.Errorf("lease %d: got key %q fence %q, want key %q and a fence", i, l.Key, l.Fence, keys[i])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Do with %d keys: %v", n, err)
		}
		if got := counter.RoundTrips.Load() - before; got != 2 && n > 0 {
			t.Errorf("%d keys: got %d round trips per cycle, want 2", n, got)
		}
	}
}

// idOnly hides every method of a Backend but lock.IDBackend's, as a
// third-party backend without multilock.Backend has them.
type idOnly struct{ lock.IDBackend }

// TestConformanceMultiFallback runs the multi-key suite on a backend that
// is only a lock.IDBackend: multilock takes its keys one by one, in the
// same order, with AcquireID.
func TestConformanceMultiFallback(t *testing.T) {
	t.Parallel()
	client := redistest.Shared(t).Client(t)
	locktest.RunMulti(t, func(t *testing.T) lock.Backend {
		return idOnly{conformanceBackends(client)(t).(lock.IDBackend)}
	})
}

// kinds is a lock.Hook that records the kinds of the operations it sees.
type kinds struct {
	mu   sync.Mutex
	seen []lock.OpKind
	keys []int // len(op.Keys) of each acquire_multi
}

func (k *kinds) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		k.mu.Lock()
		k.seen = append(k.seen, op.Kind)
		if op.Kind == lock.OpAcquireMulti {
			k.keys = append(k.keys, len(op.Keys))
		}
		k.mu.Unlock()
		return next(ctx, op)
	}
}

// TestMultiThroughHooks: a Backend wrapped by lock.WithHooks still takes
// a group in one script (two round trips a cycle), and its hooks see the
// attempt as an OpAcquireMulti naming every key and the release as an
// OpReleaseMulti.
func TestMultiThroughHooks(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	counter := redistest.Count(client)
	rb, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableCoalescing: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	hook := &kinds{}
	b := lock.WithHooks(rb, hook)
	keys := []string{"{t}:a", "{t}:b", "{t}:c"}
	ctx := context.Background()
	noop := func(context.Context, []lock.Lease) error { return nil }
	if err := multilock.Do(ctx, b, keys, noop); err != nil { // loads the scripts
		t.Fatalf("Do: %v", err)
	}
	before := counter.RoundTrips.Load()
	if err := multilock.Do(ctx, b, keys, noop); err != nil {
		t.Fatalf("Do: %v", err)
	}
	if got := counter.RoundTrips.Load() - before; got != 2 {
		t.Errorf("got %d round trips per cycle through hooks, want 2", got)
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	want := []lock.OpKind{lock.OpAcquireMulti, lock.OpReleaseMulti, lock.OpAcquireMulti, lock.OpReleaseMulti}
	if !slices.Equal(hook.seen, want) {
		t.Errorf("hooks saw %v, want %v", hook.seen, want)
	}
	if !slices.Equal(hook.keys, []int{3, 3}) {
		t.Errorf("acquire_multi ops named %v keys, want [3 3]", hook.keys)
	}
}
