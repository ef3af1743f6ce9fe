package redisbackend_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/locktest"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

func TestConformanceCluster(t *testing.T) {
	t.Parallel()
	client := redistest.SharedCluster(t).Client(t)
	backends := func(t *testing.T) lock.Backend {
		b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t)})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if b.Layout() != redisbackend.LayoutCluster {
			t.Fatalf("Layout() = %v for a ClusterClient, want cluster", b.Layout())
		}
		return b
	}
	locktest.Run(t, backends)
	t.Run("multi", func(t *testing.T) { locktest.RunMulti(t, backends) })
}

// TestClusterScriptsLoadOnEveryNode: on a cluster whose masters lost their
// script caches (SCRIPT FLUSH, as after a restart), the first call to each
// master gets NOSCRIPT and is sent again as EVAL, which loads the script
// there: keys of every node's slots are served.
func TestClusterScriptsLoadOnEveryNode(t *testing.T) {
	t.Parallel()
	c := redistest.SharedCluster(t)
	client := c.Client(t)
	ctx := clusterCtx(t)
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	masters := c.Masters(t)
	for _, addr := range masters {
		if err := c.NodeClient(t, addr).ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 12 { // keys of several slots, so of every node
		l, err := b.Acquire(ctx, "k"+strconv.Itoa(i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	for _, addr := range masters {
		n := c.NodeClient(t, addr).Info(ctx, "memory").Val()
		if !strings.Contains(n, "number_of_cached_scripts:") || strings.Contains(n, "number_of_cached_scripts:0\r") {
			t.Errorf("master %s: no script cached after the cycles", addr)
		}
	}
}

// TestConformanceClusterLayoutOnSingle runs the suite with the cluster
// layout chosen explicitly on a single server: the layout does not need a
// cluster.
func TestConformanceClusterLayoutOnSingle(t *testing.T) {
	t.Parallel()
	client := redistest.Shared(t).Client(t)
	backends := func(t *testing.T) lock.Backend {
		b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t), Layout: redisbackend.LayoutCluster})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return b
	}
	locktest.Run(t, backends)
	t.Run("multi", func(t *testing.T) { locktest.RunMulti(t, backends) })
}

func TestLayoutChoice(t *testing.T) {
	t.Parallel()
	single := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	universal := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"127.0.0.1:1", "127.0.0.1:2"}})
	failover := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() {
		_ = single.Close()
		_ = cluster.Close()
		_ = universal.Close()
		_ = failover.Close()
	})
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
		opt    redisbackend.Layout
		want   redisbackend.Layout
	}{
		{"client/auto", single, redisbackend.LayoutAuto, redisbackend.LayoutSingle},
		{"client/cluster", single, redisbackend.LayoutCluster, redisbackend.LayoutCluster},
		{"cluster/auto", cluster, redisbackend.LayoutAuto, redisbackend.LayoutCluster},
		{"cluster/single", cluster, redisbackend.LayoutSingle, redisbackend.LayoutSingle},
		{"universal-cluster/auto", universal, redisbackend.LayoutAuto, redisbackend.LayoutCluster},
		{"failover/auto", failover, redisbackend.LayoutAuto, redisbackend.LayoutSingle},
	} {
		b, err := redisbackend.New(tc.client, &redisbackend.Options{Layout: tc.opt})
		if err != nil {
			t.Fatalf("%s: New: %v", tc.name, err)
		}
		if b.Layout() != tc.want {
			t.Errorf("%s: Layout() = %v, want %v", tc.name, b.Layout(), tc.want)
		}
	}
	for _, p := range []string{"a{b}", "a{", "}x"} {
		_, err := redisbackend.New(cluster, &redisbackend.Options{Prefix: p})
		if lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("New(cluster, prefix %q) = %v, want InvalidArgument", p, err)
		}
		if _, err := redisbackend.New(single, &redisbackend.Options{Prefix: p}); err != nil {
			t.Errorf("New(single, prefix %q) = %v; the single layout allows braces", p, err)
		}
	}
	if _, err := redisbackend.New(single, &redisbackend.Options{Layout: 7}); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("New(Layout 7) = %v, want InvalidArgument", err)
	}
}

// clusterKeys computes the documented cluster-layout key names of a lock.
func clusterKeys(prefix, key, id string) (lockKey, idKey, fenceKey, doneKey string) {
	prefix = strings.TrimRight(prefix, ":")
	sum := sha256.Sum256([]byte(prefix + ":" + key))
	tag := base64.RawURLEncoding.EncodeToString(sum[:])[:3]
	tp := prefix + ":{" + tag + "}"
	lockKey = tp + ":" + key
	return lockKey, tp + ":id:" + id, tp + ":fence:" + lockKey, tp + ":done:" + lockKey
}

func clusterCtx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestClusterSpreadAndByID takes 1,000 locks on the cluster, checks that all
// keys of each lock share one slot, that the locks spread over all three
// masters, and that Extend, LookupID and Release work from the id alone
// (on a Backend that never saw the key).
func TestClusterSpreadAndByID(t *testing.T) {
	t.Parallel()
	c := redistest.SharedCluster(t)
	client := c.Client(t)
	ctx := clusterCtx(t)
	prefix := redistest.Prefix(t)
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	byID, err := redisbackend.New(client, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ranges := c.Slots(t)
	masterOf := func(slot int64) string {
		for _, r := range ranges {
			if int64(r.Start) <= slot && slot <= int64(r.End) {
				return r.Master
			}
		}
		t.Fatalf("no master for slot %d", slot)
		return ""
	}

	const n = 1000
	leases := make([]lock.Lease, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			l, err := b.Acquire(ctx, fmt.Sprintf("resource:%d", i), time.Minute)
			if err != nil {
				errs <- fmt.Errorf("Acquire %d: %w", i, err)
				return
			}
			leases[i] = l
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	perMaster := map[string]int{}
	for i, l := range leases {
		if err := lockdriver.ValidateLockID(l.ID); err != nil {
			t.Fatalf("lease %d: id %q: %v", i, l.ID, err)
		}
		lockKey, idKey, fenceKey, _ := clusterKeys(prefix, l.Key, l.ID)
		if !strings.HasPrefix(l.ID, lockKey[len(strings.TrimRight(prefix, ":"))+2:][:3]) {
			t.Fatalf("lease %d: id %q does not start with the key's tag (%s)", i, l.ID, lockKey)
		}
		var slot int64 = -1
		for _, k := range []string{lockKey, idKey, fenceKey} {
			if n, err := client.Exists(ctx, k).Result(); err != nil || n != 1 {
				t.Fatalf("lease %d: EXISTS %s = %d, %v; want 1", i, k, n, err)
			}
			s, err := client.ClusterKeySlot(ctx, k).Result()
			if err != nil {
				t.Fatal(err)
			}
			if slot >= 0 && s != slot {
				t.Fatalf("lease %d: %s in slot %d, lock key in slot %d", i, k, s, slot)
			}
			slot = s
		}
		m := masterOf(slot)
		perMaster[m]++
		if i%100 == 0 {
			// The key really lives on that master: read it there, no redirection.
			if n, err := c.NodeClient(t, m).Exists(ctx, lockKey).Result(); err != nil || n != 1 {
				t.Fatalf("lease %d: EXISTS on master %s = %d, %v", i, m, n, err)
			}
		}
	}
	if len(perMaster) != 3 {
		t.Fatalf("locks on %d masters (%v), want 3", len(perMaster), perMaster)
	}
	for m, k := range perMaster {
		if k < n/6 {
			t.Errorf("master %s holds only %d of %d locks: %v", m, k, n, perMaster)
		}
	}
	t.Logf("locks per master: %v", perMaster)

	for i, l := range leases {
		info, err := byID.LookupID(ctx, l.ID)
		if err != nil || info == nil || info.Fence != l.Fence {
			t.Fatalf("lease %d: LookupID = %+v, %v", i, info, err)
		}
		if _, err := byID.Extend(ctx, l.ID, 2*time.Minute); err != nil {
			t.Fatalf("lease %d: Extend: %v", i, err)
		}
		if err := byID.Release(ctx, l.ID); err != nil {
			t.Fatalf("lease %d: Release: %v", i, err)
		}
		if err := byID.Release(ctx, l.ID); !errors.Is(err, lock.ErrNotHeld) {
			t.Fatalf("lease %d: second Release = %v, want ErrNotHeld", i, err)
		}
		if locked, err := b.IsLocked(ctx, l.Key); err != nil || locked {
			t.Fatalf("lease %d: IsLocked after Release = %v, %v", i, locked, err)
		}
	}
	// A well-formed id that was never granted, with any tag, is simply not held.
	for _, id := range []string{lockdriver.NewLockID(), "zzz" + leases[0].ID[3:]} {
		if err := byID.Release(ctx, id); !errors.Is(err, lock.ErrNotHeld) {
			t.Errorf("Release(%q) = %v, want ErrNotHeld", id, err)
		}
	}
}

// TestClusterIsLockedCleanupAndDone covers the scripts that build or take
// more keys: is_locked.lua's cleanup of an expired lock (the index key is
// built in Lua, in the tagged slot) and ReleaseDone/IsDone.
func TestClusterIsLockedCleanupAndDone(t *testing.T) {
	t.Parallel()
	client := redistest.SharedCluster(t).Client(t)
	ctx := clusterCtx(t)
	prefix := redistest.Prefix(t)
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: prefix, CleanupInIsLocked: true})
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.Acquire(ctx, "job:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	lockKey, idKey, _, doneKey := clusterKeys(prefix, l.Key, l.ID)
	// Make the lease look long expired while its keys still exist.
	raw, err := client.Get(ctx, lockKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	stale := strings.Replace(raw, fmt.Sprintf(`"expiresAtMs":%d`, l.ExpiresAt.UnixMilli()), `"expiresAtMs":1000`, 1)
	if stale == raw {
		t.Fatalf("could not rewrite expiry in %s", raw)
	}
	if err := client.Set(ctx, lockKey, stale, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if locked, err := b.IsLocked(ctx, l.Key); err != nil || locked {
		t.Fatalf("IsLocked(expired) = %v, %v", locked, err)
	}
	if n, err := client.Exists(ctx, lockKey, idKey).Result(); err != nil || n != 0 {
		t.Fatalf("after cleanup EXISTS lock+index = %d, %v; want 0", n, err)
	}

	l, err = b.Acquire(ctx, "job:1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReleaseDone(ctx, l, time.Minute); err != nil {
		t.Fatalf("ReleaseDone: %v", err)
	}
	if done, err := b.IsDone(ctx, "job:1"); err != nil || !done {
		t.Fatalf("IsDone = %v, %v", done, err)
	}
	if got, err := client.Get(ctx, doneKey).Result(); err != nil || got != string(l.Fence) {
		t.Fatalf("done marker %s = %q, %v; want %q", doneKey, got, err, l.Fence)
	}
}

// sameTagKey returns a key other than key whose cluster hash tag (and so
// slot) is the same as key's.
func sameTagKey(t *testing.T, prefix, key string) string {
	want, _, _, _ := clusterKeys(prefix, key, "")
	want = want[:strings.Index(want, "}")+1]
	for i := 0; i < 1<<24; i++ {
		k := fmt.Sprintf("other:%d", i)
		got, _, _, _ := clusterKeys(prefix, k, "")
		if strings.HasPrefix(got, want) {
			return k
		}
	}
	t.Fatal("no key with the same tag found")
	return ""
}

// TestClusterResharding moves a slot holding locks from one master to
// another by hand (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE, SETSLOT
// NODE), running operations at each stage: during the migration the client
// follows ASK, after it MOVED. When a lock's keys are split between the two
// nodes (MIGRATE moves keys in batches, and release/extend/lookup-by-id read
// the lock key the index names), the operation fails with an error and
// changes nothing; once the keys are together again it succeeds.
func TestClusterResharding(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t)
	client := c.Client(t)
	ctx := clusterCtx(t)
	prefix := redistest.Prefix(t)
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	la, err := b.Acquire(ctx, "a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	kb := sameTagKey(t, prefix, "a")
	lb, err := b.Acquire(ctx, kb, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	aLock, aIdx, aFence, _ := clusterKeys(prefix, "a", la.ID)
	bLock, _, _, _ := clusterKeys(prefix, kb, lb.ID)
	slot, err := client.ClusterKeySlot(ctx, aLock).Result()
	if err != nil {
		t.Fatal(err)
	}
	src := c.MasterForSlot(t, int(slot))
	var dst string
	for _, m := range c.Masters(t) {
		if m != src {
			dst = m
			break
		}
	}
	srcID, dstID := c.NodeID(t, src), c.NodeID(t, dst)
	srcC, dstC := c.NodeClient(t, src), c.NodeClient(t, dst)
	must := func(cmd *redis.Cmd) {
		t.Helper()
		if err := cmd.Err(); err != nil {
			t.Fatalf("%v: %v", cmd.Args(), err)
		}
	}
	must(dstC.Do(ctx, "cluster", "setslot", slot, "importing", srcID))
	must(srcC.Do(ctx, "cluster", "setslot", slot, "migrating", dstID))
	dstHost, dstPort, _ := strings.Cut(dst, ":")
	migrate := func(keys ...string) {
		t.Helper()
		args := []interface{}{"migrate", dstHost, dstPort, "", 0, 5000, "keys"}
		for _, k := range keys {
			args = append(args, k)
		}
		must(srcC.Do(ctx, args...))
	}

	// Migrating, nothing moved yet: served by the source.
	if info, err := b.LookupID(ctx, la.ID); err != nil || info == nil {
		t.Fatalf("LookupID during migration = %v, %v", info, err)
	}
	if _, err := b.Extend(ctx, la.ID, time.Minute); err != nil {
		t.Fatalf("Extend during migration: %v", err)
	}
	// A moves as a whole: operations follow ASK to the target.
	migrate(aLock, aIdx, aFence)
	if info, err := b.LookupID(ctx, la.ID); err != nil || info == nil || info.Fence != la.Fence {
		t.Fatalf("LookupID after A moved = %+v, %v", info, err)
	}
	if _, err := b.Extend(ctx, la.ID, time.Minute); err != nil {
		t.Fatalf("Extend after A moved (ASK): %v", err)
	}
	// Acquire names a fresh index key, absent on both nodes: the target
	// answers TRYAGAIN (multi-key request on a slot being imported), which
	// go-redis retries and then reports; it must not take the lock.
	if _, err := b.Acquire(ctx, "a", time.Minute); !errors.Is(err, lock.ErrLocked) && lock.CodeOf(err) != lock.CodeServiceUnavailable {
		t.Fatalf("Acquire(a) while held, after A moved = %v, want ErrLocked or ServiceUnavailable", err)
	} else {
		t.Logf("Acquire(a) while held, after A moved: %v", err)
	}
	// B is split: its lock key moved, its index and fence keys did not.
	migrate(bLock)
	errSplit := b.Release(ctx, lb.ID)
	if lock.CodeOf(errSplit) != lock.CodeServiceUnavailable {
		t.Fatalf("Release of a lock split across nodes = %v, want ServiceUnavailable (not success, not ErrNotHeld)", errSplit)
	}
	t.Logf("split lock: Release: %v (code %s)", errSplit, lock.CodeOf(errSplit))
	_, errExt := b.Extend(ctx, lb.ID, time.Minute)
	t.Logf("split lock: Extend: %v (code %s)", errExt, lock.CodeOf(errExt))
	if lock.CodeOf(errExt) != lock.CodeServiceUnavailable {
		t.Fatalf("Extend of a split lock = %v, want ServiceUnavailable", errExt)
	}
	if locked, err := b.IsLocked(ctx, kb); err != nil || !locked {
		t.Fatalf("IsLocked(b) while split = %v, %v; want true (lock key on the target, via ASK)", locked, err)
	}

	// Finish: move the rest, hand the slot to dst everywhere.
	var rest []string
	keys, err := srcC.Do(ctx, "cluster", "getkeysinslot", slot, 100).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	rest = append(rest, keys...)
	if len(rest) > 0 {
		migrate(rest...)
	}
	for _, m := range c.Masters(t) {
		must(c.NodeClient(t, m).Do(ctx, "cluster", "setslot", slot, "node", dstID))
	}
	// Operations now get MOVED from the old owner and follow it.
	if info, err := b.LookupID(ctx, lb.ID); err != nil || info == nil || info.Fence != lb.Fence {
		t.Fatalf("LookupID(b) after the move = %+v, %v", info, err)
	}
	if err := b.Release(ctx, lb.ID); err != nil {
		t.Fatalf("Release(b) after the move: %v", err)
	}
	if err := b.Release(ctx, la.ID); err != nil {
		t.Fatalf("Release(a) after the move: %v", err)
	}
	l2, err := b.Acquire(ctx, "a", time.Minute)
	if err != nil {
		t.Fatalf("Acquire(a) after the move: %v", err)
	}
	if l2.Fence <= la.Fence {
		t.Fatalf("fence after the move %s, before %s: the counter did not move with the lock", l2.Fence, la.Fence)
	}
	if n, err := c.NodeClient(t, dst).Exists(ctx, aLock, aFence).Result(); err != nil || n != 2 {
		t.Fatalf("A's keys on the new owner: %d, %v", n, err)
	}
}

// BenchmarkScaleOut measures Acquire+Release with 32 goroutines on distinct
// keys: one redis-server, the 3-master cluster, and a primary with one
// replica (Sentinel), each with and without ReplicaAck{N: 1}, all in one run:
//
//	go test -run '^$' -bench ScaleOut -benchtime 3s ./redisbackend/
func BenchmarkScaleOut(b *testing.B) {
	ack := redisbackend.ReplicaAck{N: 1, Timeout: time.Second}
	pool := func(o *redis.Options) { o.PoolSize = 64 }
	cases := []struct {
		name   string
		client func(b *testing.B) redis.UniversalClient
		ack    redisbackend.ReplicaAck
	}{
		{"single", func(b *testing.B) redis.UniversalClient { return redistest.Shared(b).Client(b, pool) }, redisbackend.ReplicaAck{}},
		{"cluster-3-masters", func(b *testing.B) redis.UniversalClient {
			return redistest.SharedCluster(b).Client(b, func(o *redis.ClusterOptions) { o.PoolSize = 64 })
		}, redisbackend.ReplicaAck{}},
		{"cluster-3-masters+ack1", func(b *testing.B) redis.UniversalClient {
			return redistest.SharedCluster(b).Client(b, func(o *redis.ClusterOptions) { o.PoolSize = 64 })
		}, ack},
	}
	sentinel := redistest.StartSentinel(b) // on the parent: sub-benchmarks run more than once
	sentinelClient := func(b *testing.B) redis.UniversalClient {
		return sentinel.Client(b, func(o *redis.FailoverOptions) { o.PoolSize = 64 })
	}
	cases = append(cases,
		struct {
			name   string
			client func(b *testing.B) redis.UniversalClient
			ack    redisbackend.ReplicaAck
		}{"primary+replica", sentinelClient, redisbackend.ReplicaAck{}},
		struct {
			name   string
			client func(b *testing.B) redis.UniversalClient
			ack    redisbackend.ReplicaAck
		}{"primary+replica+ack1", sentinelClient, ack})
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			be, err := redisbackend.New(tc.client(b), &redisbackend.Options{Prefix: redistest.Prefix(b), ReplicaAck: tc.ack})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var gid atomic.Int64
			procs := runtime.GOMAXPROCS(0)
			b.SetParallelism((32 + procs - 1) / procs)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				key := fmt.Sprintf("bench:%d", gid.Add(1))
				for pb.Next() {
					l, err := be.Acquire(ctx, key, 10*time.Second)
					if err != nil {
						b.Error(err)
						return
					}
					if err := be.Release(ctx, l.ID); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pairs/s")
		})
	}
}
