package cli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// takeSlot takes a slot of key among n for ttl.
func takeSlot(t *testing.T, b *redisbackend.Backend, key string, n int, ttl time.Duration) lock.Lease {
	t.Helper()
	id, err := b.NewLockID(key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.AcquireSlot(context.Background(), key, id, n, ttl)
	if err != nil {
		t.Fatalf("AcquireSlot: %v", err)
	}
	return l
}

// TestLimit lists, shows and force-releases a concurrency limit with 2 of
// its 3 slots live, a third slot expired but still in its sorted set, and
// one waiter queued, next to a plain lock; each view is checked against
// LookupLimit, and the expired slot must appear nowhere.
func TestLimit(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx, cancel := context.WithCancel(context.Background())
	waiterDone := make(chan struct{})
	t.Cleanup(func() { cancel(); <-waiterDone })
	const key = "exports:u1"

	plain, err := b.Acquire(ctx, "invoice:42", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	live := []lock.Lease{takeSlot(t, b, key, 3, time.Minute), takeSlot(t, b, key, 3, 2*time.Minute)}
	expired := takeSlot(t, b, key, 3, 50*time.Millisecond)
	// Its index key would go with the tolerance; kept, only the slot's
	// score in the sorted set tells that it expired.
	if err := rdb.Persist(ctx, p+":id:"+expired.ID).Err(); err != nil {
		t.Fatal(err)
	}
	keys, _ := admin.StorageKeys(b, key)
	// A waiter whose n (2) is reached: it queues in Redis.
	waiter := make(chan lock.Lease, 1)
	go func() {
		defer close(waiterDone)
		l, err := lock.Acquire(ctx, b, key, lock.WithLimit(2), lock.WithTTL(time.Minute),
			lock.WithWait(time.Minute), lock.WithRetry(lock.Retry{BaseDelay: 30 * time.Second}))
		if err == nil {
			waiter <- l
		}
	}()
	queue := p + ":queue:" + keys.Lock
	for rdb.ZCard(ctx, queue).Val() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	// Wait out the short slot by the server's clock: no
	// script runs on the key meanwhile (the waiter queued already and
	// does not poll), so its member lingers.
	for {
		info, err := b.LookupLimit(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Holders) == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := rdb.ZCard(ctx, keys.Lock).Val(); n != 3 {
		t.Fatalf("the limit's sorted set has %d members, want 3 (the expired one lingering)", n)
	}
	info, err := b.LookupLimit(ctx, key)
	if err != nil || info == nil || info.Limit != 3 || len(info.Holders) != 2 {
		t.Fatalf("LookupLimit = %+v, %v; want 2 holders, limit 3", info, err)
	}
	noIDs := func(cmd, out string) {
		t.Helper()
		for _, l := range append([]lock.Lease{expired, plain}, live...) {
			if strings.Contains(out, l.ID) {
				t.Errorf("%s printed a lock id:\n%s", cmd, out)
			}
		}
	}
	args := []string{"--redis", urlOf(srv), "--prefix", p}

	// ls --json: a row for the lock, one for the limit, the totals.
	r := syncguard(t, append([]string{"ls", "--json"}, args...)...)
	if r.code != 0 || r.err != "" {
		t.Fatalf("ls --json: status %d, stderr %q", r.code, r.err)
	}
	noIDs("ls --json", r.out)
	out := lines(r.out)
	var totals struct{ Totals tally }
	if err := json.Unmarshal([]byte(out[len(out)-1]), &totals); err != nil {
		t.Fatalf("last line %q: %v", out[len(out)-1], err)
	}
	if tt := totals.Totals; tt.Locks != 1 || tt.Limits != 1 || tt.Slots != 2 || tt.Expired != 0 || tt.Queue != 1 || tt.Other != 0 {
		t.Errorf("totals %+v, want 1 lock, 1 limit, 2 slots, 1 queue, nothing expired or other", tt)
	}
	var limitRows []lsRow
	for _, line := range out[:len(out)-1] {
		var row lsRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if row.Limit != nil {
			limitRows = append(limitRows, row)
		} else if row.Key != "invoice:42" || row.Fence != plain.Fence {
			t.Errorf("ls lock row %+v, want invoice:42 with fence %s", row, plain.Fence)
		}
	}
	if len(limitRows) != 1 {
		t.Fatalf("ls printed %d limit rows, want 1:\n%s", len(limitRows), r.out)
	}
	row := limitRows[0]
	wantSummary := limitSummary{N: info.Limit, Holders: len(info.Holders), Waiters: 1}
	if row.Key != key || row.RedisKey != keys.Lock || *row.Limit != wantSummary || row.Holder != "" ||
		row.Fence != live[1].Fence || !row.AcquiredAt.Equal(info.Holders[1].AcquiredAt) ||
		!row.ExpiresAt.Equal(info.Holders[0].ExpiresAt) || row.TTLMs <= 0 || row.TTLMs > time.Minute.Milliseconds() {
		t.Errorf("ls limit row %+v (limit %+v), want %s: %+v, the latest grant's fence %s, the earliest expiry %v",
			row, *row.Limit, key, wantSummary, live[1].Fence, info.Holders[0].ExpiresAt)
	}

	// ls, text.
	r = syncguard(t, append([]string{"ls"}, args...)...)
	text := lines(r.out)
	if r.code != 0 || len(text) != 4 || !strings.Contains(r.out, string(live[1].Fence)+"  ") ||
		!strings.Contains(r.out, "2/3 slots, 1 waiting      exports:u1\n") ||
		!strings.HasPrefix(text[3], "1 lock, 1 limit (2 slots) (scanned") {
		t.Errorf("ls: status %d, output:\n%s", r.code, r.out)
	}

	// show --json: the limit's live slots as LookupLimit has them.
	r = syncguard(t, append([]string{"show", "--json", key}, args...)...)
	if r.code != 0 || r.err != "" {
		t.Fatalf("show --json: status %d, stderr %q", r.code, r.err)
	}
	noIDs("show --json", r.out)
	var st state
	if err := json.Unmarshal([]byte(r.out), &st); err != nil {
		t.Fatalf("show --json: %v\n%s", err, r.out)
	}
	if st.Locked || st.Expired || st.Limit == nil || st.Limit.N != 3 || len(st.Limit.Holders) != 2 || st.Waiters != 1 || st.Counter != "3" {
		t.Fatalf("show %s = %+v, want a limit of 3 with 2 holders, 1 waiter, fence counter 3", key, st)
	}
	for i, h := range st.Limit.Holders {
		want := info.Holders[i]
		if h.Fence != want.Fence || h.Holder != want.IDHash || !h.AcquiredAt.Equal(want.AcquiredAt) || !h.ExpiresAt.Equal(want.ExpiresAt) {
			t.Errorf("show's slot %d %+v disagrees with LookupLimit's %+v", i, h, want)
		}
	}
	// show, text.
	r = syncguard(t, append([]string{"show", key}, args...)...)
	for _, want := range []string{
		"state          limit: 2 of 3 slots held",
		"slot           fence " + string(live[0].Fence) + "  holder " + lockdriver.HashKey(live[0].ID),
		"slot           fence " + string(live[1].Fence) + "  holder " + lockdriver.HashKey(live[1].ID),
		"waiters        1\n",
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("show output lacks %q:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, string(expired.Fence)) {
		t.Errorf("show lists the expired slot (fence %s):\n%s", expired.Fence, r.out)
	}

	// release --force: the slots to evict must be named.
	release := append([]string{"release", "--force", "--yes"}, args...)
	r = syncguard(t, append(release, key)...)
	if r.code != ExitUsage || !strings.Contains(r.err, "2 of 3 slots held: add --all") {
		t.Errorf("release of a limit without --all or --slot: status %d, stderr %q", r.code, r.err)
	}
	r = syncguard(t, append(release, "--slot", string(expired.Fence), key)...)
	if r.code != ExitFailure || !strings.Contains(r.err, "no live slot") {
		t.Errorf("release --slot of the expired slot: status %d, stderr %q", r.code, r.err)
	}
	r = syncguard(t, append(release, "--slot", "1", "invoice:42")...)
	if r.code != ExitUsage || !strings.Contains(r.err, "is a lock, not a concurrency limit") {
		t.Errorf("release --slot of a lock: status %d, stderr %q", r.code, r.err)
	}
	// One slot, by its fence without the zeros: it goes to the waiter.
	r = syncguard(t, append(release, "--slot", strings.TrimLeft(string(live[0].Fence), "0"), key)...)
	if r.code != 0 || r.err != "" {
		t.Fatalf("release --slot: status %d, stderr %q", r.code, r.err)
	}
	noIDs("release --slot", r.out)
	for _, want := range []string{"released 1 slot of exports:u1", "removed  slot fence " + string(live[0].Fence),
		"kept     " + keys.Fence + " = 4", "now      2 of 2 slots held, 1 granted since"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("release --slot output lacks %q:\n%s", want, r.out)
		}
	}
	if err := b.Release(ctx, live[0].ID); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("the evicted holder's Release = %v, want ErrNotHeld", err)
	}
	handed := <-waiter
	if handed.Fence != "000000000000004" {
		t.Errorf("the waiter's fence %s, want 000000000000004", handed.Fence)
	}
	// Every slot.
	r = syncguard(t, append(release, "--all", key)...)
	if r.code != 0 || !strings.Contains(r.out, "released 2 slots of exports:u1") || !strings.Contains(r.out, "now      free") {
		t.Errorf("release --all: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
	}
	if info, err := b.LookupLimit(ctx, key); err != nil || info != nil {
		t.Errorf("LookupLimit after release --all = %+v, %v; want nil", info, err)
	}
	if locked, err := b.IsLocked(ctx, "invoice:42"); err != nil || !locked {
		t.Errorf("the plain lock after release --all of the limit: locked %v, %v", locked, err)
	}
}
