package redisbackend_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

func newForceBackend(t *testing.T, rdb redis.UniversalClient, o redisbackend.Options) *redisbackend.Backend {
	t.Helper()
	b, err := redisbackend.New(rdb, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func TestForceRelease(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	b := newForceBackend(t, rdb, redisbackend.Options{Prefix: redistest.Prefix(t)})
	ctx := context.Background()
	const key = "invoice:42"

	l, err := b.Acquire(ctx, key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := admin.StorageKeys(b, key)
	if err != nil {
		t.Fatal(err)
	}
	info, err := admin.ForceRelease(ctx, b, key)
	if err != nil {
		t.Fatalf("ForceRelease: %v", err)
	}
	if info.Fence != l.Fence || info.IDHash != lockdriver.HashKey(l.ID) || info.KeyHash != lockdriver.HashKey(key) {
		t.Errorf("ForceRelease = %+v, want the holder's fence %s, id hash %s", info, l.Fence, lockdriver.HashKey(l.ID))
	}
	if !info.ExpiresAt.Equal(l.ExpiresAt) {
		t.Errorf("ExpiresAt = %v, want %v", info.ExpiresAt, l.ExpiresAt)
	}
	if locked, err := b.IsLocked(ctx, key); err != nil || locked {
		t.Errorf("IsLocked after ForceRelease = %v, %v; want false", locked, err)
	}
	if n := rdb.Exists(ctx, keys.Lock).Val(); n != 0 {
		t.Errorf("lock key %s still exists", keys.Lock)
	}
	// The fence counter stays, at the released lease's fence.
	if v, err := rdb.Get(ctx, keys.Fence).Result(); err != nil || v != strconv.Itoa(fenceInt(t, l.Fence)) {
		t.Errorf("fence counter %s = %q, %v; want %d", keys.Fence, v, err, fenceInt(t, l.Fence))
	}
	// The evicted holder finds its lease gone.
	if _, err := b.Extend(ctx, l.ID, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("holder's Extend after ForceRelease = %v, want ErrNotHeld", err)
	}
	if err := b.Release(ctx, l.ID); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("holder's Release after ForceRelease = %v, want ErrNotHeld", err)
	}
	// The next holder gets a larger fence.
	l2, err := b.Acquire(ctx, key, time.Minute)
	if err != nil {
		t.Fatalf("Acquire after ForceRelease: %v", err)
	}
	if l2.Fence.Compare(l.Fence) <= 0 {
		t.Errorf("next fence %s, want above %s", l2.Fence, l.Fence)
	}
}

func fenceInt(t *testing.T, f lock.Fence) int {
	t.Helper()
	n, err := strconv.Atoi(string(f))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestForceReleaseNotLocked(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	b := newForceBackend(t, rdb, redisbackend.Options{Prefix: redistest.Prefix(t)})
	ctx := context.Background()
	if _, err := admin.ForceRelease(ctx, b, "free"); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ForceRelease of a free key = %v, want ErrNotHeld", err)
	}
	l, err := b.Acquire(ctx, "gone", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ForceRelease(ctx, b, "gone"); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ForceRelease of a released key = %v, want ErrNotHeld", err)
	}
	if _, err := admin.ForceRelease(ctx, b, "fence:x"); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("ForceRelease of a reserved key = %v, want InvalidArgument", err)
	}
}

// TestForceReleaseLeavesForeignData checks that a value that is not a
// syncguard lock, or a lock without its index key, is reported and left
// alone.
func TestForceReleaseLeavesForeignData(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	b := newForceBackend(t, rdb, redisbackend.Options{Prefix: redistest.Prefix(t)})
	ctx := context.Background()

	keys, err := admin.StorageKeys(b, "foreign")
	if err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, keys.Lock, "not a lock", time.Minute)
	if _, err := admin.ForceRelease(ctx, b, "foreign"); lock.CodeOf(err) != lock.CodeInternal {
		t.Errorf("ForceRelease of foreign data = %v, want Internal", err)
	}
	if v := rdb.Get(ctx, keys.Lock).Val(); v != "not a lock" {
		t.Errorf("foreign value = %q after ForceRelease, want it untouched", v)
	}

	l, err := b.Acquire(ctx, "orphan", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var idKey string
	for _, k := range rdb.Keys(ctx, b.Prefix()+":id:*").Val() {
		idKey = k
	}
	if idKey == "" {
		t.Fatal("no index key")
	}
	rdb.Del(ctx, idKey)
	if _, err := admin.ForceRelease(ctx, b, "orphan"); lock.CodeOf(err) != lock.CodeInternal {
		t.Errorf("ForceRelease of a lock without index = %v, want Internal", err)
	}
	if info, _ := b.LookupKey(ctx, "orphan"); info == nil || info.Fence != l.Fence {
		t.Errorf("LookupKey after the failed ForceRelease = %+v, want the lease kept", info)
	}
}

// TestForceReleaseWakesWaiter checks that a waiting lock.Acquire gets the
// key at once, as after a normal release, and not at its next poll: its
// backoff is long (3 s base delay) so a release that wakes no one would
// leave it waiting well over a second.
func TestForceReleaseWakesWaiter(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	b := newForceBackend(t, rdb, redisbackend.Options{Prefix: redistest.Prefix(t)})
	ctx := context.Background()
	const key = "stuck"

	l, err := b.Acquire(ctx, key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		waiter, err := lock.Acquire(ctx, b, key, lock.WithTTL(time.Minute), lock.WithWait(5*time.Second),
			lock.WithRetry(lock.Retry{BaseDelay: 3 * time.Second}))
		if err != nil {
			t.Errorf("waiter: %v", err)
			close(got)
			return
		}
		if waiter.Fence.Compare(l.Fence) <= 0 {
			t.Errorf("waiter's fence %s, want above %s", waiter.Fence, l.Fence)
		}
		got <- time.Now()
	}()
	time.Sleep(300 * time.Millisecond) // the waiter is subscribed and asleep
	released := time.Now()
	if _, err := admin.ForceRelease(ctx, b, key); err != nil {
		t.Fatal(err)
	}
	at, ok := <-got
	if !ok {
		return
	}
	if d := at.Sub(released); d > time.Second {
		t.Errorf("waiter acquired %v after ForceRelease, want well under 1s (woken, not polling)", d)
	}
}

// TestStorageKeys checks the names against the keys a lock really writes,
// in both layouts, with per-key and striped fence counters.
func TestStorageKeys(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		desc string
		o    redisbackend.Options
	}{
		{"single", redisbackend.Options{Layout: redisbackend.LayoutSingle}},
		{"single striped", redisbackend.Options{Layout: redisbackend.LayoutSingle, FenceStripes: 16}},
		{"cluster", redisbackend.Options{Layout: redisbackend.LayoutCluster}},
		{"cluster striped", redisbackend.Options{Layout: redisbackend.LayoutCluster, FenceStripes: 16}},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			tc.o.Prefix = redistest.Prefix(t)
			b := newForceBackend(t, rdb, tc.o)
			l, err := b.Acquire(ctx, "job:7", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			keys, err := admin.StorageKeys(b, "job:7")
			if err != nil {
				t.Fatal(err)
			}
			if v := rdb.Get(ctx, keys.Lock).Val(); v == "" {
				t.Errorf("no lock data at %s", keys.Lock)
			}
			if n := rdb.Exists(ctx, keys.Fence).Val(); n != 1 {
				t.Errorf("no fence counter at %s", keys.Fence)
			}
			if err := b.ReleaseDone(ctx, l, time.Minute); err != nil {
				t.Fatal(err)
			}
			if v := rdb.Get(ctx, keys.Done).Val(); v != string(l.Fence) {
				t.Errorf("done marker %s = %q, want %s", keys.Done, v, l.Fence)
			}
		})
	}
	b := newForceBackend(t, rdb, redisbackend.Options{})
	keys, err := admin.StorageKeys(b, "resource:123")
	if err != nil {
		t.Fatal(err)
	}
	want := admin.Keys{
		Lock:   "syncguard:resource:123",
		Fence:  "syncguard:fence:syncguard:resource:123",
		Done:   "syncguard:done:syncguard:resource:123",
		Record: "syncguard:record:syncguard:resource:123",
	}
	if keys != want {
		t.Errorf("StorageKeys = %+v, want %+v", keys, want)
	}
}

// takeSlot takes a slot of key among n for ttl, failing the test otherwise.
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

// TestForceReleaseSlots evicts one slot of a full limit by its fence (its
// slot goes to the waiter queued on the key, inside the release), then
// every live slot; the fence counter stays, the evicted holders find their
// leases gone, and a plain lock is not a limit.
func TestForceReleaseSlots(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	b := newForceBackend(t, rdb, redisbackend.Options{Prefix: redistest.Prefix(t)})
	ctx := context.Background()
	const key = "exports:u1"

	var held []lock.Lease
	for range 3 {
		held = append(held, takeSlot(t, b, key, 3, time.Minute))
	}
	keys, err := admin.StorageKeys(b, key)
	if err != nil {
		t.Fatal(err)
	}
	// A waiter queued in Redis, whose backoff is too long for it to poll
	// before the end of the test: only a hand-off gives it a slot.
	got := make(chan lock.Lease, 1)
	go func() {
		defer close(got)
		l, err := lock.Acquire(ctx, b, key, lock.WithLimit(3), lock.WithTTL(time.Minute),
			lock.WithWait(30*time.Second), lock.WithRetry(lock.Retry{BaseDelay: 20 * time.Second}))
		if err != nil {
			t.Errorf("waiter: %v", err)
			return
		}
		got <- l
	}()
	queue := b.Prefix() + ":queue:" + keys.Lock
	for rdb.ZCard(ctx, queue).Val() == 0 {
		time.Sleep(10 * time.Millisecond)
	}

	victim := held[1]
	infos, err := admin.ForceReleaseSlots(ctx, b, key, victim.Fence)
	if err != nil {
		t.Fatalf("ForceReleaseSlots(fence %s): %v", victim.Fence, err)
	}
	if len(infos) != 1 || infos[0].Fence != victim.Fence || infos[0].IDHash != lockdriver.HashKey(victim.ID) ||
		infos[0].KeyHash != lockdriver.HashKey(key) || !infos[0].ExpiresAt.Equal(victim.ExpiresAt) {
		t.Errorf("ForceReleaseSlots(fence %s) = %+v, want the one slot %+v", victim.Fence, infos, victim)
	}
	if err := b.Release(ctx, victim.ID); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("the evicted holder's Release = %v, want ErrNotHeld", err)
	}
	// The freed slot went to the waiter within the release: it holds it
	// now, with the next fence, whether or not its goroutine ran yet.
	info, err := b.LookupLimit(ctx, key)
	if err != nil || info == nil {
		t.Fatalf("LookupLimit after evicting one slot = %+v, %v", info, err)
	}
	fences := map[lock.Fence]bool{}
	for _, h := range info.Holders {
		fences[h.Fence] = true
	}
	if len(info.Holders) != 3 || !fences[held[0].Fence] || !fences[held[2].Fence] || !fences["000000000000004"] {
		t.Errorf("holders after evicting fence %s: %+v, want fences 1, 3 and the waiter's 4", victim.Fence, info.Holders)
	}
	waiter, ok := <-got
	if !ok {
		return
	}
	if waiter.Fence != "000000000000004" {
		t.Errorf("waiter's fence %s, want 000000000000004", waiter.Fence)
	}

	infos, err = admin.ForceReleaseSlots(ctx, b, key, "")
	if err != nil {
		t.Fatalf("ForceReleaseSlots(all): %v", err)
	}
	var gotFences []lock.Fence
	for _, i := range infos {
		gotFences = append(gotFences, i.Fence)
	}
	if len(infos) != 3 || !slices.Contains(gotFences, held[0].Fence) || !slices.Contains(gotFences, held[2].Fence) ||
		!slices.Contains(gotFences, waiter.Fence) {
		t.Errorf("ForceReleaseSlots(all) released fences %v, want %s, %s, %s", gotFences, held[0].Fence, held[2].Fence, waiter.Fence)
	}
	if info, err := b.LookupLimit(ctx, key); err != nil || info != nil {
		t.Errorf("LookupLimit after evicting every slot = %+v, %v; want nil", info, err)
	}
	if v := rdb.Get(ctx, keys.Fence).Val(); v != "4" {
		t.Errorf("fence counter = %q, want 4 (kept)", v)
	}
	if _, err := b.Extend(ctx, held[0].ID, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("an evicted holder's Extend = %v, want ErrNotHeld", err)
	}
	if next := takeSlot(t, b, key, 3, time.Minute); next.Fence.Compare(waiter.Fence) <= 0 {
		t.Errorf("next fence %s, want above %s", next.Fence, waiter.Fence)
	}

	// No slot with that fence, no slot at all, and the other kind.
	if _, err := admin.ForceReleaseSlots(ctx, b, key, held[0].Fence); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ForceReleaseSlots of a fence no longer held = %v, want ErrNotHeld", err)
	}
	if _, err := admin.ForceReleaseSlots(ctx, b, "free", ""); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ForceReleaseSlots of a free key = %v, want ErrNotHeld", err)
	}
	if _, err := admin.ForceRelease(ctx, b, key); !errors.Is(err, lock.ErrKindMismatch) {
		t.Errorf("ForceRelease of a limit = %v, want ErrKindMismatch", err)
	}
	if _, err := b.Acquire(ctx, "plain", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ForceReleaseSlots(ctx, b, "plain", ""); !errors.Is(err, lock.ErrKindMismatch) {
		t.Errorf("ForceReleaseSlots of a lock = %v, want ErrKindMismatch", err)
	}
}

// TestForceReleaseRW: ForceReleaseRW releases one reader by its fence, then
// every reader, handing the key to the writer that queued behind them; it
// releases the writer too, reports ErrNotHeld on a free key, and refuses a
// plain lock's key.
func TestForceReleaseRW(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	prefix := redistest.Prefix(t)
	b := newForceBackend(t, rdb, redisbackend.Options{Prefix: prefix})
	ctx := context.Background()
	const key = "settings:tenant-7"
	hold := func(mode rwlock.Mode) lock.Lease {
		t.Helper()
		id, err := b.NewLockID(key)
		if err != nil {
			t.Fatal(err)
		}
		l, err := b.AcquireRW(ctx, key, id, mode, time.Minute)
		if err != nil {
			t.Fatalf("AcquireRW(%s): %v", mode, err)
		}
		return l
	}
	r1, r2, r3 := hold(rwlock.ModeRead), hold(rwlock.ModeRead), hold(rwlock.ModeRead)

	info, err := admin.ForceReleaseRW(ctx, b, key, r2.Fence)
	if err != nil || info == nil || info.Writer != nil || len(info.Readers) != 1 ||
		info.Readers[0].Fence != r2.Fence || info.Readers[0].IDHash != lockdriver.HashKey(r2.ID) {
		t.Fatalf("ForceReleaseRW(fence %s) = %+v, %v; want that reader alone", r2.Fence, info, err)
	}
	if err := b.Release(ctx, r2.ID); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("the evicted reader's Release = %v, want ErrNotHeld", err)
	}

	// A writer queued behind the readers gets the key when they go.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	got := make(chan lock.Lease, 1)
	go func() {
		_, l, release, err := rwlock.HoldWrite(wctx, b, key, lock.WithTTL(time.Minute), lock.WithWait(10*time.Second))
		if err == nil {
			t.Cleanup(func() { _ = release() })
		}
		got <- l
	}()
	waitQueued(t, rdb, b, prefix, key)
	info, err = admin.ForceReleaseRW(ctx, b, key)
	if err != nil || info == nil || len(info.Readers) != 2 {
		t.Fatalf("ForceReleaseRW(all) = %+v, %v; want the two readers left", info, err)
	}
	var w lock.Lease
	select {
	case w = <-got:
	case <-wctx.Done():
		t.Fatal("the queued writer was not granted after the readers' eviction")
	}
	if w.Fence.Compare(r3.Fence) <= 0 || w.Fence.Compare(r1.Fence) <= 0 {
		t.Errorf("writer's fence %s, want above the readers' %s, %s", w.Fence, r1.Fence, r3.Fence)
	}
	info, err = admin.ForceReleaseRW(ctx, b, key)
	if err != nil || info == nil || info.Writer == nil || info.Writer.Fence != w.Fence || len(info.Readers) != 0 {
		t.Fatalf("ForceReleaseRW on the writer = %+v, %v; want the writer, fence %s", info, err, w.Fence)
	}
	if _, err := admin.ForceReleaseRW(ctx, b, key); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ForceReleaseRW on a free key = %v, want ErrNotHeld", err)
	}
	if _, err := b.Acquire(ctx, "invoice:42", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ForceReleaseRW(ctx, b, "invoice:42"); !errors.Is(err, lock.ErrKindMismatch) {
		t.Errorf("ForceReleaseRW on a lock's key = %v, want ErrKindMismatch", err)
	}
}

// waitQueued waits until key's queue in Redis has an entry.
func waitQueued(t *testing.T, rdb redis.UniversalClient, b *redisbackend.Backend, prefix, key string) {
	t.Helper()
	keys, err := admin.StorageKeys(b, key)
	if err != nil {
		t.Fatal(err)
	}
	queue := wire.QueueKey(strings.TrimSuffix(prefix, ":"), keys.Lock) // the backend drops the trailing colon
	for deadline := time.Now().Add(5 * time.Second); rdb.ZCard(context.Background(), queue).Val() == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("nobody queued at %s", queue)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
