package redisbackend

// Internal tests (package redisbackend, unlike the rest) so they can see
// how many waiters a key has queued, instead of sleeping and hoping.

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/syncguard-go/syncguard/internal/redistest"
	"github.com/syncguard-go/syncguard/lock"
)

// newNotifyBackend returns a Backend under a prefix of the test's own,
// closed in t.Cleanup.
func newNotifyBackend(t *testing.T, client redis.Scripter, o Options) *Backend {
	t.Helper()
	if o.Prefix == "" {
		o.Prefix = redistest.Prefix(t)
	}
	b, err := New(client, &o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// queued returns how many watches are registered on key.
func (b *Backend) queued(t *testing.T, key string) int {
	t.Helper()
	_, lockKey, err := b.lockKey("test", key)
	if err != nil {
		t.Fatal(err)
	}
	b.notify.mu.Lock()
	defer b.notify.mu.Unlock()
	n := 0
	if q := b.notify.queues[lockKey]; q != nil {
		for w := q.head; w != nil; w = w.next {
			n++
		}
	}
	return n
}

// subscribe subscribes b to the release channels of keys (default one
// key, "subscribe") and waits for each confirmation (which wakes every
// watch of the key), so that from then on, for a second (subscriptionIdle)
// after their last watch, only releases wake their watches.
func subscribe(t *testing.T, b *Backend, keys ...string) {
	t.Helper()
	if len(keys) == 0 {
		keys = []string{"subscribe"}
	}
	for _, key := range keys {
		ch, cancel := b.WatchKey(key)
		select {
		case <-ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("no wake-up on the confirmation of %s's subscription", key)
		}
		cancel()
	}
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// acquireResult is the outcome of a background lock.Acquire.
type acquireResult struct {
	lease lock.Lease
	err   error
	at    time.Time // when Acquire returned
}

func acquireAsync(ctx context.Context, b lock.Backend, key string, opts ...lock.Option) <-chan acquireResult {
	ch := make(chan acquireResult, 1)
	go func() {
		l, err := lock.Acquire(ctx, b, key, opts...)
		ch <- acquireResult{l, err, time.Now()}
	}()
	return ch
}

// slowPolling makes a waiter that, without notifications, would not look
// again for 2s.
var slowPolling = []lock.Option{
	lock.WithBaseDelay(2 * time.Second),
	lock.WithJitter(lock.JitterNone),
	lock.WithBackoff(lock.BackoffFixed),
	lock.WithWait(20 * time.Second),
	lock.WithMaxRetries(1000),
}

// TestNotifyWakesWaiter: a waiter that would poll every 2s gets the lock
// right after the holder's Release, running a handful of scripts in all.
func TestNotifyWakesWaiter(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	holder := newNotifyBackend(t, srv.Client(t), Options{Prefix: prefix})
	counter := &redistest.Counter{}
	wc := srv.Client(t)
	wc.AddHook(counter)
	waiter := newNotifyBackend(t, wc, Options{Prefix: prefix})
	ctx := context.Background()

	l, err := holder.Acquire(ctx, "hot", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	subscribe(t, waiter, "hot")
	before0 := counter.Scripts.Load()
	res := acquireAsync(ctx, waiter, "hot", slowPolling...)
	waitFor(t, "the waiter's watch", 5*time.Second, func() bool { return waiter.queued(t, "hot") == 1 })
	time.Sleep(200 * time.Millisecond) // no poll is due for 2s
	before := counter.Scripts.Load()

	if err := holder.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	r := <-res
	if r.err != nil {
		t.Fatalf("waiter: %v", r.err)
	}
	handoff := r.at.Sub(released)
	before -= before0
	t.Logf("handoff %v; scripts before release %d, after %d", handoff, before, counter.Scripts.Load()-before0-before)
	if handoff > 500*time.Millisecond {
		t.Errorf("waiter took %v after the release, want < 500ms (polling would take ~2s)", handoff)
	}
	// The first attempt and the re-check after watching (each maybe with
	// a NOSCRIPT EVAL retry), then one after the release.
	if before > 4 {
		t.Errorf("the waiter ran %d scripts while waiting, want <= 4: it polled", before)
	}
	if after := counter.Scripts.Load() - before0 - before; after > 2 {
		t.Errorf("the waiter ran %d scripts after the release, want 1", after)
	}
	if err := waiter.Release(ctx, r.lease.ID); err != nil {
		t.Fatal(err)
	}
}

// TestNotifyMiniredis: miniredis runs PUBLISH inside Lua and delivers it.
func TestNotifyMiniredis(t *testing.T) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	b := newNotifyBackend(t, client, Options{})
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res := acquireAsync(ctx, b, "k", slowPolling...)
	waitFor(t, "the waiter's watch", 5*time.Second, func() bool { return b.queued(t, "k") == 1 })
	time.Sleep(200 * time.Millisecond)
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	if d := r.at.Sub(released); d > 500*time.Millisecond {
		t.Errorf("waiter took %v after the release on miniredis, want < 500ms", d)
	}
}

// TestNotifyExpiredHolderPolled: a holder that never releases publishes
// nothing; the waiter still gets the lock by polling once the lease ends.
func TestNotifyExpiredHolderPolled(t *testing.T) {
	t.Parallel()
	client := redistest.Shared(t).Client(t)
	b := newNotifyBackend(t, client, Options{})
	ctx := context.Background()
	if _, err := b.Acquire(ctx, "k", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	l, err := lock.Acquire(ctx, b, "k", lock.WithBaseDelay(100*time.Millisecond),
		lock.WithBackoff(lock.BackoffFixed), lock.WithWait(10*time.Second), lock.WithMaxRetries(1000))
	if err != nil {
		t.Fatalf("waiter: %v", err)
	}
	// Redis drops the lock key at its PX; no release was published.
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("got the lock after %v, before the holder's lease ended", d)
	}
	_ = b.Release(ctx, l.ID)
}

// TestNotifyDisabled: with DisableNotifications the waiter only polls.
func TestNotifyDisabled(t *testing.T) {
	t.Parallel()
	client := redistest.Shared(t).Client(t)
	b := newNotifyBackend(t, client, Options{DisableNotifications: true})
	if ch, cancel := b.WatchKey("k"); ch != nil || cancel == nil {
		t.Fatalf("WatchKey with notifications disabled = %v, cancel nil: %v; want nil, false", ch, cancel == nil)
	}
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res := acquireAsync(ctx, b, "k", slowPolling...)
	time.Sleep(200 * time.Millisecond)
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	r := <-res
	if r.err != nil {
		t.Fatal(r.err)
	}
	if d := r.at.Sub(released); d < time.Second {
		t.Errorf("waiter took %v after the release, want the ~1.8s left of its 2s poll", d)
	}
	if b.notify.started {
		t.Error("a Backend with notifications disabled subscribed")
	}
}

// scripterOnly hides everything of a client but redis.Scripter, Subscribe
// included.
type scripterOnly struct{ redis.Scripter }

// TestNotifyClientWithoutSubscribe: a client with no Subscribe works by
// polling.
func TestNotifyClientWithoutSubscribe(t *testing.T) {
	t.Parallel()
	client := redistest.Shared(t).Client(t)
	b := newNotifyBackend(t, scripterOnly{client}, Options{})
	if ch, _ := b.WatchKey("k"); ch != nil {
		t.Fatal("WatchKey on a client without Subscribe returned a channel")
	}
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	res := acquireAsync(ctx, b, "k", lock.WithBaseDelay(50*time.Millisecond), lock.WithWait(10*time.Second))
	time.Sleep(100 * time.Millisecond)
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.err != nil {
		t.Fatalf("waiter: %v", r.err)
	}
	_ = b.Release(ctx, r.lease.ID)
}

// TestNotifyManyWaiters: 16 waiters on one key all get it, one at a time,
// far faster than their 2s polling would allow.
func TestNotifyManyWaiters(t *testing.T) {
	client := redistest.Shared(t).Client(t, func(o *redis.Options) { o.PoolSize = 32 })
	b := newNotifyBackend(t, client, Options{})
	ctx := context.Background()
	const n = 16
	var inside, maxInside, done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := lock.Acquire(ctx, b, "hot", slowPolling...)
			if err != nil {
				errs <- err
				return
			}
			if v := inside.Add(1); v > maxInside.Load() {
				maxInside.Store(v)
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			done.Add(1)
			if err := b.Release(ctx, l.ID); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	total := time.Since(start)
	t.Logf("%d waiters served in %v", done.Load(), total)
	if maxInside.Load() != 1 {
		t.Errorf("%d holders at once, want 1", maxInside.Load())
	}
	if total >= 1900*time.Millisecond {
		t.Errorf("16 handoffs took %v: some waiter waited for its 2s poll", total)
	}
}

// TestNotifyCancelledWaitersDoNotSwallowWakeups: of 5 queued waiters the
// first 3 give up; each release still reaches a remaining waiter at once.
func TestNotifyCancelledWaitersDoNotSwallowWakeups(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	b := newNotifyBackend(t, client, Options{})
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var cancels []context.CancelFunc
	var results []<-chan acquireResult
	subscribe(t, b, "k")
	for i := range 5 {
		wctx, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
		results = append(results, acquireAsync(wctx, b, "k", slowPolling...))
		// One at a time, so the queue is in start order.
		waitFor(t, "a watch", 5*time.Second, func() bool { return b.queued(t, "k") == i+1 })
	}
	for i := range 3 {
		cancels[i]()
		if r := <-results[i]; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled waiter %d: %v, want context.Canceled", i, r.err)
		}
	}
	defer cancels[3]()
	defer cancels[4]()
	pending := map[int]bool{3: true, 4: true}
	for len(pending) > 0 {
		if err := b.Release(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
		released := time.Now()
		var got acquireResult
		select {
		case got = <-results[3]:
			delete(pending, 3)
		case got = <-results[4]:
			delete(pending, 4)
		case <-time.After(1500 * time.Millisecond):
			t.Fatalf("no remaining waiter got the lock within 1.5s of the release")
		}
		if got.err != nil {
			t.Fatal(got.err)
		}
		if d := got.at.Sub(released); d > 500*time.Millisecond {
			t.Errorf("handoff took %v, want < 500ms", d)
		}
		l = got.lease
	}
	_ = b.Release(ctx, l.ID)
}

// TestWatchKeyWakesOneAndHandsOn: a release wakes the oldest watch only; a
// cancelled watch that was woken but not consumed hands the wake-up on.
func TestWatchKeyWakesOneAndHandsOn(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	b := newNotifyBackend(t, client, Options{})
	ctx := context.Background()

	subscribe(t, b, "k", "other")

	ch1, cancel1 := b.WatchKey("k")
	ch2, cancel2 := b.WatchKey("k")
	defer cancel2()
	chOther, cancelOther := b.WatchKey("other")
	defer cancelOther()

	release := func() {
		t.Helper()
		l, err := b.Acquire(ctx, "k", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	release()
	waitFor(t, "the wake-up of the first watch", 5*time.Second, func() bool { return len(ch1) == 1 })
	time.Sleep(50 * time.Millisecond)
	if len(ch2) != 0 || len(chOther) != 0 {
		t.Fatal("one release woke more than the oldest watch of its key")
	}
	cancel1() // woken, not consumed: hand it on
	select {
	case <-ch2:
	case <-time.After(time.Second):
		t.Fatal("the wake-up of a cancelled watch was not handed on")
	}
	if len(chOther) != 0 {
		t.Fatal("a release of k woke a watch of another key")
	}
	cancel1() // idempotent
}

// TestCloseStopsDispatcher: Close ends the subscription and its goroutines,
// wakes the waiters, leaves the client open, and later watches are nil.
func TestCloseStopsDispatcher(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	opts := []goleak.Option{goleak.IgnoreCurrent()}

	b, err := New(client, &Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil { // before any watch: nothing to stop
		t.Fatal(err)
	}
	if ch, _ := b.WatchKey("k"); ch != nil {
		t.Fatal("WatchKey after Close returned a channel")
	}

	b, err = New(client, &Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	subscribe(t, b)
	ch, cancel := b.WatchKey("k")
	defer cancel()
	if !stackHas("(*notifier).run") {
		t.Fatal("no dispatcher goroutine while watching")
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-ch:
	default:
		t.Error("Close did not wake a waiting watch")
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	goleak.VerifyNone(t, opts...)
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Errorf("the client no longer works after Close: %v", err)
	}
	if ch, _ := b.WatchKey("k"); ch != nil {
		t.Error("WatchKey after Close returned a channel")
	}
	// The Backend still works, by polling.
	l, err := lock.Acquire(context.Background(), b, "k")
	if err != nil {
		t.Fatal(err)
	}
	_ = b.Release(context.Background(), l.ID)

	// Close racing the dispatcher's start.
	b, err = New(client, &Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, cancel3 := b.WatchKey("k")
	defer cancel3()
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	goleak.VerifyNone(t, opts...)
}

func stackHas(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}
