package redisbackend_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// countedBackend returns a backend on its own client of srv, with a hook
// counting its round trips.
func countedBackend(t testing.TB, srv *redistest.Server, opts ...func(*redis.Options)) (*redisbackend.Backend, *redis.Client, *redistest.Counter) {
	t.Helper()
	rdb := srv.Client(t, opts...)
	h := redistest.Count(rdb)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	return b, rdb, h
}

func TestExtendBatch(t *testing.T) {
	ctx := context.Background()
	b, rdb, h := countedBackend(t, redistest.Shared(t))
	acquire := func(key string) lock.Lease {
		l, err := b.Acquire(ctx, key, 2*time.Second)
		if err != nil {
			t.Fatalf("acquire %s: %v", key, err)
		}
		return l
	}
	a, c, released := acquire("a"), acquire("c"), acquire("r")
	if err := b.Release(ctx, released.ID); err != nil {
		t.Fatal(err)
	}
	const ttl = 20 * time.Second
	reqs := []lock.Lease{
		{ID: a.ID, TTL: ttl},
		{ID: "not-a-lock-id", TTL: ttl},
		{ID: released.ID, TTL: ttl},
		{ID: lockdriver.NewLockID(), TTL: ttl}, // foreign: never acquired
		{ID: c.ID, TTL: 0},                     // bad TTL
		{ID: c.ID, TTL: ttl},
	}
	// Warm up: the first call may dial and, on a server that has not seen
	// the extend script, go through NOSCRIPT, SCRIPT LOAD and a resend.
	if r := b.ExtendBatch(ctx, reqs[:1]); r[0].Err != nil {
		t.Fatalf("warm-up: %v", r[0].Err)
	}
	trips, cmds := h.RoundTrips.Load(), h.Commands.Load()
	before := time.Now()
	res := b.ExtendBatch(ctx, reqs)
	if len(res) != len(reqs) {
		t.Fatalf("len(results) = %d, want %d", len(res), len(reqs))
	}
	if got := h.RoundTrips.Load() - trips; got != 1 {
		t.Errorf("round trips = %d, want 1 pipeline", got)
	}
	if got := h.Commands.Load() - cmds; got != 4 {
		t.Errorf("commands sent = %d, want 4 (the invalid requests are not sent)", got)
	}
	for _, i := range []int{0, 5} {
		if res[i].Err != nil {
			t.Errorf("result %d: %v, want success", i, res[i].Err)
			continue
		}
		if d := res[i].ExpiresAt.Sub(before); d < ttl-time.Second || d > ttl+time.Second {
			t.Errorf("result %d: expiry %v from now, want about %v", i, d, ttl)
		}
	}
	for _, i := range []int{1, 4} {
		if lock.CodeOf(res[i].Err) != lock.CodeInvalidArgument {
			t.Errorf("result %d: %v, want InvalidArgument", i, res[i].Err)
		}
	}
	for _, i := range []int{2, 3} {
		if !errors.Is(res[i].Err, lock.ErrNotHeld) {
			t.Errorf("result %d: %v, want ErrNotHeld", i, res[i].Err)
		}
	}
	// The extension is real: the keys' TTLs grew past the original 2s.
	for _, l := range []lock.Lease{a, c} {
		info, err := b.LookupID(ctx, l.ID)
		if err != nil || info == nil {
			t.Fatalf("lookup: %v, %v", info, err)
		}
		if d := time.Until(info.ExpiresAt); d < ttl-2*time.Second {
			t.Errorf("lease expires in %v, want about %v", d, ttl)
		}
	}
	keys, err := rdb.Keys(ctx, b.Prefix()+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if pttl := rdb.PTTL(ctx, k).Val(); pttl > 0 && pttl < 10*time.Second {
			t.Errorf("PTTL(%s) = %v, want about %v", k, pttl, ttl)
		}
	}
	// A cancelled context: every result is Aborted, nothing sent.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	trips = h.RoundTrips.Load()
	for i, r := range b.ExtendBatch(cctx, reqs) {
		if lock.CodeOf(r.Err) != lock.CodeAborted {
			t.Errorf("cancelled: result %d = %v, want Aborted", i, r.Err)
		}
	}
	if h.RoundTrips.Load() != trips {
		t.Errorf("cancelled batch sent commands")
	}
}

// TestExtendBatchNoScript: after SCRIPT FLUSH (as after a restart) the
// batch reloads the script and still extends.
func TestExtendBatchNoScript(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	b, rdb, _ := countedBackend(t, srv)
	var ids []lock.Lease
	for i := range 5 {
		l, err := b.Acquire(ctx, fmt.Sprint("k", i), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, lock.Lease{ID: l.ID, TTL: 10 * time.Second})
	}
	for round := range 2 {
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		for i, r := range b.ExtendBatch(ctx, ids) {
			if r.Err != nil {
				t.Errorf("round %d, result %d after SCRIPT FLUSH: %v", round, i, r.Err)
			}
		}
	}
}

// TestExtendBatchUnreachable: a dead server gives a transient system
// error in every result.
func TestExtendBatchUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	b, err := redisbackend.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := []lock.Lease{{ID: lockdriver.NewLockID(), TTL: time.Second}, {ID: lockdriver.NewLockID(), TTL: time.Second}}
	for i, r := range b.ExtendBatch(context.Background(), reqs) {
		if code := lock.CodeOf(r.Err); code != lock.CodeServiceUnavailable && code != lock.CodeNetworkTimeout {
			t.Errorf("result %d = %v, want ServiceUnavailable or NetworkTimeout", i, r.Err)
		}
	}
}

// TestKeepBatchedRedis keeps 2,000 leases alive through lock.Keep with
// TTL 3s for 7s: none is lost, the keep-alive adds a goroutine or so, and
// it costs a few round trips per second instead of ~2,000.
func TestKeepBatchedRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("7s soak; skipped with -short")
	}
	const n, ttl, hold = 2000, 3 * time.Second, 7 * time.Second
	ctx := context.Background()
	// A server of its own: the keep-alive goes on while the package's
	// serial tests use the shared one.
	b, _, h := countedBackend(t, redistest.Start(t))
	leases := make([]lock.Lease, n)
	for i := range leases {
		l, err := b.Acquire(ctx, fmt.Sprint("k", i), ttl)
		if err != nil {
			t.Fatal(err)
		}
		leases[i] = l
	}
	baseline := runtime.NumGoroutine()
	helds := make([]context.Context, n)
	stops := make([]func() error, n)
	var lostCount atomic.Int64
	for i, l := range leases {
		helds[i], stops[i] = lock.Keep(ctx, b, l)
		context.AfterFunc(helds[i], func() {
			if errors.Is(context.Cause(helds[i]), lock.ErrLeaseLost) {
				lostCount.Add(1)
			}
		})
	}
	added := runtime.NumGoroutine() - baseline
	// The goroutine count needs the process to itself; the soak does
	// not, so it waits for the serial tests and overlaps the parallel ones.
	t.Parallel()
	trips := h.RoundTrips.Load()
	time.Sleep(hold)
	rate := float64(h.RoundTrips.Load()-trips) / hold.Seconds()
	t.Logf("%d leases, TTL %v, %v: %.1f round trips/s, %d goroutines added", n, ttl, hold, rate, added)
	if added >= 20 {
		t.Errorf("goroutines added = %d, want < 20", added)
	}
	// About 3 round trips/s (the leases are due every TTL/3 and share
	// batches); the bound leaves room for a loaded machine splitting
	// batches, and still fails the per-lease heartbeat (~670/s).
	if rate > 50 {
		t.Errorf("round trips/s = %.1f, want a few (at most 50 for %d leases)", rate, n)
	}
	for i, held := range helds {
		if held.Err() != nil {
			t.Fatalf("lease %d lost: %v", i, context.Cause(held))
		}
	}
	// Past 2 TTLs, every lease must still be on the server.
	for i := 0; i < n; i += 97 {
		if ok, err := b.IsLocked(ctx, leases[i].Key); err != nil || !ok {
			t.Errorf("lease %d on the server: %v, %v; want held", i, ok, err)
		}
	}
	for i, stop := range stops {
		if err := stop(); err != nil {
			t.Errorf("stop %d: %v", i, err)
		}
	}
	if lostCount.Load() != 0 {
		t.Errorf("%d leases lost", lostCount.Load())
	}
}
