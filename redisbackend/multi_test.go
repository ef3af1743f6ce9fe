package redisbackend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/locktest"
	"github.com/syncguard-go/syncguard/lock/multilock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMultiRoundTrips: N keys of one slot take two round trips per cycle
// of multilock.Do, one script call to take them all and one pipeline to
// release them, whatever N, on one Redis and on Redis Cluster.
func TestMultiRoundTrips(t *testing.T) {
	t.Run("single", func(t *testing.T) {
		client := redistest.Shared(t).Client(t)
		countMultiTrips(t, client, redistest.Count(client))
	})
	t.Run("cluster", func(t *testing.T) {
		client := redistest.SharedCluster(t).Client(t)
		counter := &redistest.Counter{}
		client.AddHook(counter)
		countMultiTrips(t, client, counter)
	})
}

// countMultiTrips checks the round trips counter counts for a cycle of
// multilock.Do on 1, 2, 8 and MaxKeys keys of one hash tag.
func countMultiTrips(t *testing.T, client redis.UniversalClient, counter *redistest.Counter) {
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableCoalescing: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx := context.Background()
	// The first cycle loads the scripts (NOSCRIPT, then EVAL or SCRIPT LOAD).
	for _, n := range []int{0, 1, 2, 8, multilock.MaxKeys} {
		keys := make([]string, max(n, 1))
		for i := range keys {
			keys[i] = fmt.Sprintf("{acct}:%d", i)
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

// TestMultiThroughHooks: a Backend wrapped twice by lock.WithHooks still
// takes a group in one script (two round trips a cycle), and the hooks of
// both layers see the attempt as an OpAcquireMulti naming every key and
// the release as an OpReleaseMulti.
func TestMultiThroughHooks(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	counter := redistest.Count(client)
	rb, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableCoalescing: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	hook, outer := &kinds{}, &kinds{}
	b := lock.WithHooks(lock.WithHooks(rb, hook), outer) // each layer's hooks see the operations
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
	outer.mu.Lock()
	defer outer.mu.Unlock()
	want := []lock.OpKind{lock.OpAcquireMulti, lock.OpReleaseMulti, lock.OpAcquireMulti, lock.OpReleaseMulti}
	if !slices.Equal(hook.seen, want) {
		t.Errorf("hooks saw %v, want %v", hook.seen, want)
	}
	if !slices.Equal(hook.keys, []int{3, 3}) {
		t.Errorf("acquire_multi ops named %v keys, want [3 3]", hook.keys)
	}
	if !slices.Equal(outer.seen, want) {
		t.Errorf("outer hooks saw %v, want %v", outer.seen, want)
	}
}

// TestMultiFleet: three Backends, each on a client of its own, run three
// workers each that take random sets of 3 of 6 keys (over 3 hash tags) in
// random orders, with a wait: no key ever has two holders, every key's
// fences strictly increase in grant order, and every worker finishes (a
// deadlock would hold until the context's end). On one Redis in both
// layouts, and on Redis Cluster.
func TestMultiFleet(t *testing.T) {
	t.Parallel()
	server := redistest.Shared(t)
	for _, tc := range []struct {
		desc   string
		layout redisbackend.Layout
		client func(t *testing.T) redis.UniversalClient
	}{
		{"single", redisbackend.LayoutSingle, func(t *testing.T) redis.UniversalClient { return server.Client(t) }},
		{"cluster layout", redisbackend.LayoutCluster, func(t *testing.T) redis.UniversalClient { return server.Client(t) }},
		{"cluster", redisbackend.LayoutAuto, func(t *testing.T) redis.UniversalClient { return redistest.SharedCluster(t).Client(t) }},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			prefix := redistest.Prefix(t)
			var backends []lock.Backend
			for range 3 {
				b, err := redisbackend.New(tc.client(t), &redisbackend.Options{Prefix: prefix, Layout: tc.layout})
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				t.Cleanup(func() { _ = b.Close() })
				backends = append(backends, b)
			}
			runMultiFleet(t, backends, []string{"{a}1", "{a}2", "{b}1", "{b}2", "{c}1", "{c}2"})
		})
	}
}

// runMultiFleet runs 3 workers per backend, 5 rounds each, on random sets of
// 3 of keys, and checks exclusion, fences and progress.
func runMultiFleet(t *testing.T, backends []lock.Backend, keys []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	holders := map[string]int{}
	last := map[string]lock.Fence{}
	var wg sync.WaitGroup
	for w := range 3 * len(backends) {
		b := backends[w%len(backends)]
		wg.Go(func() {
			for r := range 5 {
				set := rand.Perm(len(keys))[:3]
				names := []string{keys[set[0]], keys[set[1]], keys[set[2]]}
				err := multilock.Do(ctx, b, names, func(_ context.Context, leases []lock.Lease) error {
					mu.Lock()
					for _, l := range leases {
						if holders[l.Key]++; holders[l.Key] > 1 {
							t.Errorf("key %s: two holders", l.Key)
						}
						if f, ok := last[l.Key]; ok && l.Fence.Compare(f) <= 0 {
							t.Errorf("key %s: fence %s after %s, want greater", l.Key, l.Fence, f)
						}
						last[l.Key] = l.Fence
					}
					mu.Unlock()
					time.Sleep(time.Millisecond)
					mu.Lock()
					for _, l := range leases {
						holders[l.Key]--
					}
					mu.Unlock()
					return nil
				}, lock.WithWait(25*time.Second))
				if err != nil {
					t.Errorf("worker %d, round %d: %v", w, r, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestMultiWire: the keys of a multi-key lease are a plain lease's, in
// the syncguard wire format (TypeScript clients read them as locks): the
// lock JSON of exactly five members, the index holding the lock key, a
// fence counter per key; nothing else is written.
func TestMultiWire(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	prefix := b.Prefix()
	ctx := context.Background()
	keys := []string{`a"\é`, "b"}
	_, leases, release, err := multilock.Hold(ctx, b, keys, lock.WithTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = release() }()
	got := rdb.Keys(ctx, prefix+":*").Val()
	slices.Sort(got)
	want := []string{prefix + ":" + keys[0], prefix + ":b", prefix + ":fence:" + prefix + ":" + keys[0],
		prefix + ":fence:" + prefix + ":b", prefix + ":id:" + leases[0].ID, prefix + ":id:" + leases[1].ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("keys = %q, want %q", got, want)
	}
	for i, l := range leases {
		lockKey := prefix + ":" + keys[i]
		var data map[string]any
		if err := json.Unmarshal([]byte(rdb.Get(ctx, lockKey).Val()), &data); err != nil || len(data) != 5 {
			t.Errorf("lock value of key %d: %v, %v; want JSON of 5 members", i, data, err)
		}
		if data["lockId"] != l.ID || data["key"] != keys[i] || data["fence"] != "000000000000001" {
			t.Errorf("lock value of key %d = %v; want the lease's id, key and fence 000000000000001", i, data)
		}
		if exp, _ := data["expiresAtMs"].(float64); int64(exp) != l.ExpiresAt.UnixMilli() {
			t.Errorf("expiresAtMs of key %d = %v, want %v", i, int64(exp), l.ExpiresAt.UnixMilli())
		}
		if idx := rdb.Get(ctx, prefix+":id:"+l.ID).Val(); idx != lockKey {
			t.Errorf("index of key %d = %q, want %q", i, idx, lockKey)
		}
	}
}

// TestMultiGroups: in the cluster layout keys sharing a Redis hash tag
// share a group (and so a slot), keys without one do not; in the single
// layout every key is of one group.
func TestMultiGroups(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	group := func(b *redisbackend.Backend, key string) string {
		g, err := b.Group(key)
		if err != nil {
			t.Fatalf("Group(%q): %v", key, err)
		}
		return g
	}
	single, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	cluster, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableConfigRecord: true, Layout: redisbackend.LayoutCluster})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		desc string
		a, b string
		same bool
	}{
		{"one hash tag", "{acct}:1", "{acct}:2", true},
		{"the first tag counts", "x{acct}{1}", "y{acct}{2}", true},
		{"other tags", "{acct1}:1", "{acct2}:1", false},
		{"no tag", "acct:1", "acct:2", false},
		{"an empty tag is no tag", "{}acct:1", "{}acct:2", false},
		{"an unclosed brace is no tag", "{acct:1", "{acct:2", false},
	} {
		if got := group(cluster, tc.a) == group(cluster, tc.b); got != tc.same {
			t.Errorf("%s: cluster layout: same group = %v, want %v", tc.desc, got, tc.same)
		}
		if group(single, tc.a) != group(single, tc.b) {
			t.Errorf("%s: single layout: keys in different groups, want one", tc.desc)
		}
	}
}

// failFirstRelease is a lock.Hook that fails the first release_multi
// with a transient error without running it, as a Redis that did not
// answer would.
type failFirstRelease struct{ failed atomic.Bool }

func (f *failFirstRelease) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		if op.Kind == lock.OpReleaseMulti && f.failed.CompareAndSwap(false, true) {
			return &lock.Error{Code: lock.CodeServiceUnavailable, Op: "release", Msg: "test: no answer"}
		}
		return next(ctx, op)
	}
}

// TestMultiReleaseRetried: a release that fails on a transient error goes
// to the release error handler once, is not Do's error, and is tried
// again in the background until the keys are free.
func TestMultiReleaseRetried(t *testing.T) {
	rb, err := redisbackend.New(redistest.Shared(t).Client(t), &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	b := lock.WithHooks(rb, &failFirstRelease{})
	keys := []string{"{r}:a", "{r}:b"}
	var told atomic.Int32
	ctx := context.Background()
	err = multilock.Do(ctx, b, keys, func(context.Context, []lock.Lease) error { return nil },
		lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) {
			if lock.CodeOf(err) != lock.CodeServiceUnavailable {
				t.Errorf("release error handler got %v, want the ServiceUnavailable failure", err)
			}
			told.Add(1)
		}))
	if err != nil {
		t.Fatalf("Do: %v, want nil (a failed release is the handler's)", err)
	}
	if n := told.Load(); n != 1 {
		t.Errorf("release error handler called %d times, want once", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, k := range keys {
		for {
			held, err := rb.IsLocked(ctx, k)
			if err == nil && !held {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("key %s still held 5s after the failed release (IsLocked = %v, %v)", k, held, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestReleaseMultiOneFails: one release of a group that fails (a lock
// value that is not lock data: the script answers an error for it) is that
// lease's error alone; the other leases of the script are released.
func TestReleaseMultiOneFails(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	keys := []string{"a", "b"}
	ids := []string{lockdriver.NewLockID(), lockdriver.NewLockID()}
	if _, err := b.AcquireMulti(ctx, keys, ids, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, b.Prefix()+":b", "not lock data", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	errs := b.ReleaseMulti(ctx, ids)
	if errs[0] != nil {
		t.Errorf("release of the intact lease: %v, want nil", errs[0])
	}
	if lock.CodeOf(errs[1]) != lock.CodeInternal {
		t.Errorf("release of the corrupt one: %v, want an Internal error", errs[1])
	}
	if held, err := b.IsLocked(ctx, "a"); err != nil || held {
		t.Errorf("IsLocked(a) = %v, %v after its release; want false", held, err)
	}
}
