package redisbackend

// Internal tests (package redisbackend, unlike most) so they can see a
// Backend's waiters and subscription instead of sleeping and hoping.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// newQueueBackend returns a Backend under prefix (the test's own when
// ""), closed in t.Cleanup.
func newQueueBackend(t *testing.T, client redis.UniversalClient, o Options) *Backend {
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

// queueLen is the number of entries in key's queue.
func queueLen(t *testing.T, rdb redis.Cmdable, b *Backend, key string) int64 {
	t.Helper()
	_, lockKey, err := b.lockKey("test", key)
	if err != nil {
		t.Fatal(err)
	}
	return rdb.ZCard(context.Background(), b.prefix+":queue:"+lockKey).Val()
}

// holderID is the lock id of the lease on key, "" when free.
func holderID(t *testing.T, rdb redis.Cmdable, b *Backend, key string) string {
	t.Helper()
	_, lockKey, err := b.lockKey("test", key)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := rdb.Get(context.Background(), lockKey).Result()
	if errors.Is(err, redis.Nil) {
		return ""
	}
	data, err := decodeLockData(raw)
	if err != nil {
		t.Fatalf("lock data %q: %v", raw, err)
	}
	return data.LockID
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

// slowPolling makes a waiter that, without hand-offs, would not look again
// for 3s.
var slowPolling = []lock.Option{
	lock.WithRetry(lock.Retry{MaxRetries: 1000, BaseDelay: 3 * time.Second, Fixed: true, NoJitter: true}),
	lock.WithWait(20 * time.Second),
}

// holdAndQueue takes key on holder and starts a lock.Acquire of key on
// waiter with opts (slowPolling by default); it returns once key's queue
// has n entries.
func holdAndQueue(t *testing.T, rdb redis.Cmdable, holder, waiter *Backend, key string, n int64, opts ...lock.Option) (lock.Lease, <-chan acquireResult) {
	t.Helper()
	l, err := holder.Acquire(context.Background(), key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) == 0 {
		opts = slowPolling
	}
	res := acquireAsync(context.Background(), waiter, key, opts...)
	waitFor(t, "the waiter's queue entry", 5*time.Second, func() bool { return queueLen(t, rdb, holder, key) == n })
	return l, res
}

// joinQueued joins b's queue of the busy key with a new lock id (TTL 1
// minute) and attempts until the waiter is the queue's only entry.
func joinQueued(t *testing.T, rdb redis.Cmdable, b *Backend, key string, wait time.Duration) (string, lock.Waiter) {
	t.Helper()
	id, err := b.NewLockID(key)
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.Join(key, id, 0, time.Minute, wait)
	if err != nil {
		t.Fatal(err)
	}
	// Attempt until it queues (the first one subscribes).
	waitFor(t, "the waiter's entry", 5*time.Second, func() bool {
		if _, err := w.Attempt(context.Background()); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("Attempt: %v, want ErrLocked", err)
		}
		return queueLen(t, rdb, b, key) == 1
	})
	return id, w
}

// releaseExpectGrant releases lease id on b and expects res within 2s
// (a hand-off), failing with what otherwise.
func releaseExpectGrant(t *testing.T, b *Backend, id string, res <-chan acquireResult, what string) {
	t.Helper()
	if err := b.Release(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	expectGrant(t, res, 2*time.Second, what)
}

// expectGrant waits up to within for res and fails with what if it does
// not come or failed.
func expectGrant(t *testing.T, res <-chan acquireResult, within time.Duration, what string) acquireResult {
	t.Helper()
	select {
	case r := <-res:
		if r.err != nil {
			t.Fatalf("%s: %v", what, r.err)
		}
		return r
	case <-time.After(within):
		t.Fatal(what)
	}
	return acquireResult{}
}

// TestHandOffToWaiter: a release hands the lock to the queued waiter (the
// lock key holds the waiter's lease before the waiter's process even
// hears of it), which returns it without another script: one script to
// queue, none after the release.
func TestHandOffToWaiter(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	rdb := srv.Client(t)
	holder := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix})
	counter := &redistest.Counter{}
	wc := srv.Client(t)
	wc.AddHook(counter)
	waiter := newQueueBackend(t, wc, Options{Prefix: prefix})
	ctx := context.Background()

	l, res := holdAndQueue(t, rdb, holder, waiter, "hot", 1)
	before := counter.Scripts.Load()

	if err := holder.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	r := <-res
	if r.err != nil {
		t.Fatalf("waiter: %v", r.err)
	}
	if d := r.at.Sub(released); d > time.Second {
		t.Errorf("waiter took %v after the release, want well under 1s (its next poll was 3s away)", d)
	}
	if after := counter.Scripts.Load() - before; after != 0 {
		t.Errorf("the waiter ran %d scripts after the release, want 0 (the release handed the lease over)", after)
	}
	if r.lease.Fence.Compare(l.Fence) <= 0 {
		t.Errorf("handed-off fence %s, want above %s", r.lease.Fence, l.Fence)
	}
	if got := holderID(t, rdb, holder, "hot"); got != r.lease.ID {
		t.Errorf("lock key held by %q, want the waiter's %q", got, r.lease.ID)
	}
	if n := queueLen(t, rdb, holder, "hot"); n != 0 {
		t.Errorf("queue has %d entries after the hand-off, want 0", n)
	}
	// The handed-off lease is an ordinary one: it extends, is found by
	// id, and releases.
	if _, err := waiter.Extend(ctx, r.lease.ID, time.Minute); err != nil {
		t.Errorf("Extend of the handed-off lease: %v", err)
	}
	if info, err := waiter.LookupID(ctx, r.lease.ID); err != nil || info == nil || info.Fence != r.lease.Fence {
		t.Errorf("LookupID of the handed-off lease = %+v, %v", info, err)
	}
	if err := waiter.Release(ctx, r.lease.ID); err != nil {
		t.Fatal(err)
	}
	if got := holderID(t, rdb, holder, "hot"); got != "" {
		t.Errorf("lock key held by %q after the last release, want free", got)
	}
}

// TestUncontendedAcquireDoesNotSubscribe: acquisitions that never meet a
// busy key (with lock.Acquire's default wait) neither queue nor open the
// hand-off subscription.
func TestUncontendedAcquireDoesNotSubscribe(t *testing.T) {
	srv := redistest.Shared(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	for i := range 20 {
		l, err := lock.Acquire(ctx, b, fmt.Sprint("free", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	b.notify.mu.Lock()
	started, waiters := b.notify.started, len(b.notify.waiters)
	b.notify.mu.Unlock()
	if started || waiters != 0 {
		t.Errorf("after 20 uncontended acquisitions: subscription started %v, %d waiters registered; want neither", started, waiters)
	}
}

// TestHandOffFIFO: with HandOffLocality off, waiters on four Backends
// (separate clients) get a hot key in the order they queued, whichever
// Backend they run on. (With it, a Backend's own waiters go first for a
// while: TestHandOffLocality.)
func TestHandOffFIFO(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	rdb := srv.Client(t)
	bs := make([]*Backend, 4)
	for i := range bs {
		bs[i] = newQueueBackend(t, srv.Client(t), Options{Prefix: prefix, HandOffLocality: -1})
	}
	ctx := context.Background()
	l, err := bs[0].Acquire(ctx, "fifo", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range n {
		b := bs[(i*3+1)%len(bs)]
		wg.Go(func() {
			got, err := lock.Acquire(ctx, b, "fifo", slowPolling...)
			if err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			if err := b.Release(ctx, got.ID); err != nil {
				t.Errorf("waiter %d release: %v", i, err)
			}
		})
		// Queue them one at a time, so their order is known.
		waitFor(t, fmt.Sprintf("waiter %d's entry", i), 5*time.Second, func() bool { return queueLen(t, rdb, bs[0], "fifo") == int64(i+1) })
	}
	if err := bs[0].Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, w := range order {
		if w != i {
			t.Fatalf("grant order %v, want 0..%d in order", order, n-1)
		}
	}
}

// TestCancelledWaiterGrantedReleases: a waiter that gives up just after a
// release handed it the lock (the lease is on its channel, unread)
// releases that lease on Leave, and the release hands it on to the next
// waiter: nothing stays locked for the TTL.
func TestCancelledWaiterGrantedReleases(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	rdb := srv.Client(t)
	holder := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix})
	wb := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix})
	ctx := context.Background()

	l, err := holder.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	id, w := joinQueued(t, rdb, wb, "k", 10*time.Second)
	// A second waiter, queued behind it.
	next := acquireAsync(ctx, holder, "k", slowPolling...)
	waitFor(t, "the second entry", 5*time.Second, func() bool { return queueLen(t, rdb, holder, "k") == 2 })

	if err := holder.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	var granted lock.Lease
	for granted.ID == "" { // skip requests for an attempt
		select {
		case granted = <-w.Granted():
		case <-time.After(5 * time.Second):
			t.Fatal("no hand-off")
		}
	}
	if granted.ID != id {
		t.Fatalf("handed %+v, want a lease for %s", granted, id)
	}
	// It gives up without taking the lease (as lock.Acquire does when its
	// ctx ends at that moment).
	w.Leave(false)
	select {
	case r := <-next:
		if r.err != nil {
			t.Fatalf("second waiter: %v", r.err)
		}
		if r.lease.Fence.Compare(granted.Fence) <= 0 {
			t.Errorf("second waiter's fence %s, want above %s", r.lease.Fence, granted.Fence)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the lease handed to the waiter that left was not handed on (its poll was 3s away)")
	}
}

// TestLeaveTakesEntryOut: a waiter that gives up before any release leaves
// the queue, so the next release goes to the waiter behind it.
func TestLeaveTakesEntryOut(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	gone := acquireAsync(wctx, b, "k", slowPolling...)
	waitFor(t, "the entry", 5*time.Second, func() bool { return queueLen(t, rdb, b, "k") == 1 })
	cancel()
	if r := <-gone; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v, want context.Canceled", r.err)
	}
	waitFor(t, "the entry to leave", 5*time.Second, func() bool { return queueLen(t, rdb, b, "k") == 0 })
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if got := holderID(t, rdb, b, "k"); got != "" {
		t.Errorf("lock held by %q after the release, want free (its only waiter left)", got)
	}
}

// TestDeadWaiterSkipped: a waiter whose process is gone (its Backend's
// subscription closed, its entry left behind) does not get the lock: the
// release hands it to the next live waiter.
func TestDeadWaiterSkipped(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	rdb := srv.Client(t)
	holder := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix})
	dead := newQueueBackend(t, srv.Client(t), Options{Prefix: prefix})
	ctx := context.Background()
	l, err := holder.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := joinQueued(t, rdb, dead, "k", 30*time.Second)
	// The process dies: no Leave, its subscription goes.
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dead subscription to go", 5*time.Second, func() bool {
		return rdb.PubSubNumSub(ctx, dead.notify.channel).Val()[dead.notify.channel] == 0
	})
	live := acquireAsync(ctx, holder, "k", slowPolling...)
	waitFor(t, "the live entry", 5*time.Second, func() bool { return queueLen(t, rdb, holder, "k") == 2 })
	releaseExpectGrant(t, holder, l.ID, live, "the live waiter did not get the lock; the dead one's id is "+id)
}

// TestExpiredEntrySkipped: an entry past its deadline (queued time plus
// wait) is dropped by the release even where its channel is not checked
// (the cluster layout's "n" entries).
func TestExpiredEntrySkipped(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, lockKey, _ := b.lockKey("test", "k")
	fenceKey, _ := b.fenceKey("k", lockKey)
	stale := lockdriver.NewLockID()
	ch := "nobody"
	entry := stale + " 60000 100 nk " + fmt.Sprint(len(ch)) + " " + ch + fenceKey
	rdb.ZAdd(ctx, b.prefix+":queue:"+lockKey, redis.Z{Score: 1, Member: entry}) // queued in 1970, waited 100ms
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if got := holderID(t, rdb, b, "k"); got != "" {
		t.Errorf("lock held by %q after the release, want free (its only entry had expired)", got)
	}
}

// TestPlainAcquireTakesFreeLock: a client that does not queue (the
// TypeScript library's acquire script, or Backend.Acquire) takes a free
// lock even with entries queued, and the queue still works afterwards.
// Its lease is not marked as waited on (no waiter has met it yet), so its
// release hands nothing over: the queued waiter takes the lock by its own
// fallback attempt, within lockdriver.QueuedPollInterval (its earlier delays
// are short here).
func TestPlainAcquireTakesFreeLock(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	l, queued := holdAndQueue(t, rdb, b, b, "k", 1, lock.WithWait(20*time.Second),
		lock.WithRetry(lock.Retry{MaxRetries: 1000, BaseDelay: 50 * time.Millisecond, MaxDelay: 100 * time.Millisecond}))
	// The holder's lease goes without a release (as a TypeScript
	// client's release does: it knows nothing of queues).
	_, lockKey, _ := b.lockKey("test", "k")
	rdb.Del(ctx, lockKey, b.indexKey(l.ID))
	// A plain acquisition, with the spec's script (no queue key).
	plain, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatalf("plain Acquire of a free lock with a queue: %v", err)
	}
	if n := queueLen(t, rdb, b, "k"); n != 1 {
		t.Errorf("queue has %d entries after a plain acquire, want 1 (untouched)", n)
	}
	if err := b.Release(ctx, plain.ID); err != nil {
		t.Fatal(err)
	}
	expectGrant(t, queued, lockdriver.QueuedPollInterval+time.Second, "the queued waiter did not get the lock after the plain holder's release")
}

// TestPubSubKilledFallsBackToPolling: with the hand-off subscription's
// connection killed (CLIENT KILL TYPE pubsub), hand-offs to this process
// are lost (release.lua finds no subscriber and drops the entries), but
// every waiter still gets the lock: by polling, and by queueing again
// when go-redis re-subscribes.
func TestPubSubKilledFallsBackToPolling(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	l, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	fast := []lock.Option{lock.WithRetry(lock.Retry{MaxRetries: 1000, BaseDelay: 100 * time.Millisecond, MaxDelay: 200 * time.Millisecond}),
		lock.WithWait(20 * time.Second)}
	errs := make(chan error, n)
	for range n {
		go func() {
			got, err := lock.Acquire(ctx, b, "k", fast...)
			if err == nil {
				err = b.Release(ctx, got.ID)
			}
			errs <- err
		}()
	}
	waitFor(t, "the entries", 5*time.Second, func() bool { return queueLen(t, rdb, b, "k") == n })
	if err := rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatalf("waiter: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of %d waiters got the lock after the pub/sub connection was killed", i, n)
		}
	}
}

// TestHandOffsResumeAfterPubSubReconnect: after the hand-off
// subscription's connection is killed, the Backend reads the subscription
// again on a new connection (go-redis re-subscribes), so the next release
// hands the lock over at once. The waiter polls once a minute, so only a
// hand-off can bring it the lock within the test's bound.
func TestHandOffsResumeAfterPubSubReconnect(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	l, res := holdAndQueue(t, rdb, b, b, "k", 1)
	pubsubClient := func() string {
		for _, line := range strings.Split(rdb.ClientList(ctx).Val(), "\n") {
			if strings.Contains(line, " sub=1 ") {
				id, _, _ := strings.Cut(strings.TrimPrefix(line, "id="), " ")
				return id
			}
		}
		return ""
	}
	killed := pubsubClient()
	if killed == "" {
		t.Fatal("no subscribed connection after the waiter queued")
	}
	if err := rdb.Do(ctx, "CLIENT", "KILL", "ID", killed).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a new subscribed connection", 5*time.Second, func() bool {
		id := pubsubClient()
		return id != "" && id != killed
	})
	// The confirmation asks the waiter for an attempt, which keeps its
	// place (the entry was not dropped: nothing was released meanwhile).
	if n := queueLen(t, rdb, b, "k"); n != 1 {
		t.Fatalf("queue has %d entries after the reconnect, want 1", n)
	}
	releaseExpectGrant(t, b, l.ID, res, "no hand-off after the subscription's connection was replaced")
}

// TestOwnWaiterHandedOverFromTheReply: a release that hands the lock to a
// waiter of the releasing Backend tells it from its own reply: the waiter
// (polling only every 3s) has the lease at once, and nothing is published.
func TestOwnWaiterHandedOverFromTheReply(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	l, res := holdAndQueue(t, rdb, b, b, "k", 1)
	ctx := context.Background()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	releaseExpectGrant(t, b, l.ID, res, "the own waiter was not handed the lock from the release's reply")
	if stats := rdb.Info(ctx, "commandstats").Val(); strings.Contains(stats, "cmdstat_publish:") {
		t.Errorf("a hand-off to the releasing Backend's own waiter was published:\n%s", stats)
	}
}

// TestSilentSubscriptionPinged: a subscription connection that has been
// silent for pingAfter is PINGed (a dead connection then fails the ping,
// and go-redis reconnects), as go-redis's PubSub.Channel does.
func TestSilentSubscriptionPinged(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	b.notify.pingAfter = 100 * time.Millisecond // before its subscriber starts
	l, res := holdAndQueue(t, rdb, b, b, "k", 1)
	ctx := context.Background()
	pings := func() string {
		for _, line := range strings.Split(rdb.Info(ctx, "commandstats").Val(), "\n") {
			if strings.HasPrefix(line, "cmdstat_ping:") {
				return line
			}
		}
		return ""
	}
	before := pings()
	waitFor(t, "a PING on the silent subscription", 5*time.Second, func() bool { return pings() != before })
	releaseExpectGrant(t, b, l.ID, res, "no hand-off after the pings")
}

// TestQueueMiniredis: miniredis runs the queue's scripts and delivers the
// hand-off.
func TestQueueMiniredis(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	b := newQueueBackend(t, rdb, Options{Prefix: "mini"})
	l, res := holdAndQueue(t, rdb, b, b, "k", 1)
	releaseExpectGrant(t, b, l.ID, res, "no hand-off on miniredis")
}

// TestQueueOff: with DisableNotifications and with ReplicaAck, Join is
// unsupported and lock.Acquire polls.
func TestQueueOff(t *testing.T) {
	srv := redistest.Shared(t)
	for _, tc := range []struct {
		name   string
		client redis.UniversalClient
		o      Options
	}{
		{"DisableNotifications", srv.Client(t), Options{DisableNotifications: true}},
		{"ReplicaAck", srv.Client(t), Options{ReplicaAck: ReplicaAck{N: 1, Timeout: time.Second}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newQueueBackend(t, tc.client, tc.o)
			if _, err := b.Join("k", lockdriver.NewLockID(), 0, time.Second, time.Second); !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("Join: %v, want ErrUnsupported", err)
			}
			if tc.o.ReplicaAck.N > 0 {
				return // this server has no replica to acknowledge a lock
			}
			ctx := context.Background()
			l, err := b.Acquire(ctx, "k", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			res := acquireAsync(ctx, b, "k", lock.WithRetry(lock.Retry{BaseDelay: 50 * time.Millisecond}), lock.WithWait(5*time.Second))
			time.Sleep(100 * time.Millisecond)
			if err := b.Release(ctx, l.ID); err != nil {
				t.Fatal(err)
			}
			if r := <-res; r.err != nil {
				t.Fatalf("polling waiter: %v", r.err)
			}
		})
	}
}

// TestQueueReleaseNobodyWaitsOnIsSilent: releases of keys nobody waits on
// publish nothing, so idle instances (which waited before and may still be
// subscribed) receive nothing.
func TestQueueReleaseNobodyWaitsOnIsSilent(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	b := newQueueBackend(t, srv.Client(t), Options{})
	ctx := context.Background()
	before := rdb.Info(ctx, "stats").Val()
	for i := range 200 {
		l, err := b.Acquire(ctx, fmt.Sprint("k", i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Release(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got := rdb.Info(ctx, "commandstats").Val(); strings.Contains(got, "cmdstat_publish:") {
		t.Errorf("releases of keys nobody waits on published: %s (stats before: %d bytes)", got, len(before))
	}
}

// TestCloseStopsDispatcher: Close ends the subscription and its
// goroutines, and asks waiters for an attempt (they then poll).
func TestCloseStopsDispatcher(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	c := srv.Client(t)
	o := Options{Prefix: redistest.Prefix(t)}
	b, err := New(c, &o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l, res := holdAndQueue(t, rdb, b, b, "k", 1, lock.WithRetry(lock.Retry{BaseDelay: 100 * time.Millisecond}), lock.WithWait(10*time.Second))
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil {
		t.Fatalf("waiter after Close: %v", r.err)
	} else if err := b.Release(ctx, r.lease.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Join("k", lockdriver.NewLockID(), 0, time.Second, time.Second); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Join after Close: %v, want ErrUnsupported", err)
	}
	time.Sleep(50 * time.Millisecond) // Leave's background release
	_ = c.Close()
}
