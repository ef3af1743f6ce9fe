package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestClusterLimit lists, shows and force-releases a full limit with a
// waiter queued on a Redis Cluster (the cluster layout names a slot's
// index key with the lock key's tag, and the queue outside the tag).
func TestClusterLimit(t *testing.T) {
	c := redistest.SharedCluster(t)
	p := prefix(t)
	rdb := c.Client(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx, cancel := context.WithCancel(context.Background())
	waiterDone := make(chan struct{})
	t.Cleanup(func() { cancel(); <-waiterDone })
	const key = "exports:u1"
	held := []lock.Lease{takeSlot(t, b, key, 2, time.Minute), takeSlot(t, b, key, 2, time.Minute)}
	go func() {
		defer close(waiterDone)
		_, _ = lock.Acquire(ctx, b, key, lock.WithLimit(2), lock.WithWait(time.Minute), lock.WithRetry(lock.Retry{BaseDelay: 30 * time.Second}))
	}()
	keys, _ := admin.StorageKeys(b, key)
	for rdb.ZCard(ctx, p+":queue:"+keys.Lock).Val() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	args := []string{"--prefix", p, "--redis", "redis://" + c.Addrs()[0]}

	r := syncguard(t, append([]string{"ls", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("ls: status %d, stderr %q", r.code, r.err)
	}
	out := lines(r.out)
	var row lsRow
	var totals struct{ Totals tally }
	if len(out) != 2 || json.Unmarshal([]byte(out[0]), &row) != nil || json.Unmarshal([]byte(out[1]), &totals) != nil {
		t.Fatalf("ls --json on the cluster:\n%s", r.out)
	}
	if row.Key != key || row.Limit == nil || *row.Limit != (limitSummary{N: 2, Holders: 2, Waiters: 1}) || row.Node == "" {
		t.Errorf("ls row %+v (limit %+v), want %s with 2 of 2 slots, 1 waiter, its node", row, row.Limit, key)
	}
	if tt := totals.Totals; tt.Limits != 1 || tt.Slots != 2 || tt.Queue != 1 || tt.Other != 0 {
		t.Errorf("totals %+v, want 1 limit, 2 slots, 1 waiter queue, nothing other", tt)
	}

	r = syncguard(t, append([]string{"show", key}, args...)...)
	if r.code != 0 || !strings.Contains(r.out, "limit: 2 of 2 slots held") || !strings.Contains(r.out, "fence "+string(held[1].Fence)) {
		t.Errorf("show on the cluster: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
	}
	r = syncguard(t, append([]string{"release", "--force", "--yes", "--all", key}, args...)...)
	if r.code != 0 || !strings.Contains(r.out, "released 2 slots") || !strings.Contains(r.out, "now      1 of 2 slots held, 1 granted since") {
		t.Errorf("release --all on the cluster: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
	}
}
