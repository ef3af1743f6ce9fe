package redisbackend_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/redistest"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

func newForceBackend(t *testing.T, rdb redis.Scripter, o redisbackend.Options) *redisbackend.Backend {
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
	keys, err := b.StorageKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	info, err := b.ForceRelease(ctx, key)
	if err != nil {
		t.Fatalf("ForceRelease: %v", err)
	}
	if info.Fence != l.Fence || info.IDHash != lock.HashKey(l.ID) || info.KeyHash != lock.HashKey(key) {
		t.Errorf("ForceRelease = %+v, want the holder's fence %s, id hash %s", info, l.Fence, lock.HashKey(l.ID))
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
	if _, err := b.ForceRelease(ctx, "free"); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ForceRelease of a free key = %v, want ErrNotHeld", err)
	}
	l, err := b.Acquire(ctx, "gone", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ForceRelease(ctx, "gone"); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("ForceRelease of a released key = %v, want ErrNotHeld", err)
	}
	if _, err := b.ForceRelease(ctx, "fence:x"); lock.CodeOf(err) != lock.CodeInvalidArgument {
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

	keys, err := b.StorageKeys("foreign")
	if err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, keys.Lock, "not a lock", time.Minute)
	if _, err := b.ForceRelease(ctx, "foreign"); lock.CodeOf(err) != lock.CodeInternal {
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
	if _, err := b.ForceRelease(ctx, "orphan"); lock.CodeOf(err) != lock.CodeInternal {
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
			lock.WithBaseDelay(3*time.Second))
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
	if _, err := b.ForceRelease(ctx, key); err != nil {
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
			keys, err := b.StorageKeys("job:7")
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
	keys, err := b.StorageKeys("resource:123")
	if err != nil {
		t.Fatal(err)
	}
	want := redisbackend.StorageKeys{
		Lock:  "syncguard:resource:123",
		Fence: "syncguard:fence:syncguard:resource:123",
		Done:  "syncguard:done:syncguard:resource:123",
	}
	if keys != want {
		t.Errorf("StorageKeys = %+v, want %+v", keys, want)
	}
}
