package redisbackend_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// noticeLog collects what a Watch reports.
type noticeLog struct {
	mu  sync.Mutex
	got []string // "<fence> <expired|live> <identity>"; "resync" for an empty fence
}

func (n *noticeLog) add(fence lock.Fence, exp time.Time, identity string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case fence == "":
		n.got = append(n.got, "resync")
	case exp.IsZero():
		n.got = append(n.got, string(fence)+" ended")
	default:
		n.got = append(n.got, string(fence)+" live "+identity)
	}
}

func (n *noticeLog) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n.mu.Lock()
		for _, g := range n.got {
			if g == want {
				n.mu.Unlock()
				return
			}
		}
		got := append([]string(nil), n.got...)
		n.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no notice %q; got %q", want, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestProclaimOwner: Proclaim stores the identity as the member "owner"
// of the lock data (readable as JSON with every member syncguard's
// readers expect), Extend keeps it, LookupOwner returns it, and the
// watchers of the key on another Backend get the notices of the term and
// of its end; a lease that is not the key's live one is ErrNotHeld.
func TestProclaimOwner(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	rdb := srv.Client(t)
	b := newBackend(t, rdb, prefix)
	watcher := newBackend(t, srv.Client(t), prefix)
	t.Cleanup(func() { _ = b.Close(); _ = watcher.Close() })
	ctx := context.Background()
	const key = "election:owner"

	var log noticeLog
	stop, err := watcher.Watch(key, log.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	log.waitFor(t, "resync") // the subscription is confirmed

	l, err := b.Acquire(ctx, key, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Proclaim(ctx, l, "node 1"); err != nil {
		t.Fatal(err)
	}
	log.waitFor(t, string(l.Fence)+" live node 1")
	if _, err := b.Extend(ctx, l.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	raw, err := rdb.Get(ctx, prefixed(prefix, key)).Result()
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal([]byte(raw), &data); err != nil {
		t.Fatalf("lock data %q: %v", raw, err)
	}
	for _, m := range []string{"lockId", "expiresAtMs", "acquiredAtMs", "key", "fence"} {
		if _, ok := data[m]; !ok {
			t.Errorf("lock data %q lacks %s", raw, m)
		}
	}
	if data["owner"] != "node 1" {
		t.Errorf("owner after Extend = %v, want node 1 (data %q)", data["owner"], raw)
	}
	if pttl := rdb.PTTL(ctx, prefixed(prefix, key)).Val(); pttl <= 0 {
		t.Errorf("PTTL = %v, want the lease's", pttl)
	}
	owner, info, err := watcher.LookupOwner(ctx, key)
	if err != nil || owner != "node 1" || info == nil || info.Fence != l.Fence {
		t.Errorf("LookupOwner = %q, %+v, %v", owner, info, err)
	}

	other := l
	other.ID = lockdriver.NewLockID()
	if err := b.Proclaim(ctx, other, "intruder"); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Proclaim(other id) = %v, want ErrNotHeld", err)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.Announce(ctx, l); err != nil {
		t.Fatal(err)
	}
	log.waitFor(t, string(l.Fence)+" ended")
	if err := b.Proclaim(ctx, l, "node 1"); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Proclaim(released) = %v, want ErrNotHeld", err)
	}
	if owner, info, err := watcher.LookupOwner(ctx, key); owner != "" || info != nil || err != nil {
		t.Errorf("LookupOwner(free) = %q, %+v, %v", owner, info, err)
	}
}

// prefixed is the lock key of key under a test prefix (single layout).
func prefixed(prefix, key string) string { return strings.TrimRight(prefix, ":") + ":" + key }

// TestWatchUnsupported: a Backend without notifications cannot watch.
func TestWatchUnsupported(t *testing.T) {
	srv := redistest.Shared(t)
	b, err := redisbackend.New(srv.Client(t), &redisbackend.Options{Prefix: redistest.Prefix(t), DisableNotifications: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Watch("k", func(lock.Fence, time.Time, string) {}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Watch = %v, want ErrUnsupported", err)
	}
}

// TestProclaimKeepsQueue: a term proclaimed after a waiter queued is still
// handed to that waiter by its release (proclaim keeps the lock data's
// mark that someone queued).
func TestProclaimKeepsQueue(t *testing.T) {
	srv := redistest.Shared(t)
	prefix := redistest.Prefix(t)
	b := newBackend(t, srv.Client(t), prefix)
	other := newBackend(t, srv.Client(t), prefix)
	t.Cleanup(func() { _ = b.Close(); _ = other.Close() })
	ctx := context.Background()
	const key = "election:queued"
	l, err := b.Acquire(ctx, key, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := other.NewLockID(key)
	w, err := other.Join(key, id, 0, 30*time.Second, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Leave(false)
	p := strings.TrimRight(prefix, ":")
	queue := wire.QueueKey(p, p+":"+key)
	rdb := srv.Client(t)
	deadline := time.Now().Add(5 * time.Second)
	for rdb.ZCard(ctx, queue).Val() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the waiter did not queue")
		}
		if _, err := w.Attempt(ctx); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("Attempt = %v, want ErrLocked", err)
		}
		select {
		case <-w.Granted():
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := b.Proclaim(ctx, l, "leader"); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-w.Granted():
		if g.ID != id {
			t.Errorf("granted %+v, want the waiter's lease", g)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no hand-off after the release of a proclaimed term")
	}
}

// TestProclaimCluster: on Redis Cluster, a proclaimed term's notice
// reaches a watcher on another client, and its owner is read back.
func TestProclaimCluster(t *testing.T) {
	t.Parallel()
	c := redistest.SharedCluster(t)
	prefix := redistest.Prefix(t)
	var bs [2]*redisbackend.Backend
	for i := range bs {
		b, err := redisbackend.New(c.Client(t), &redisbackend.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close() })
		bs[i] = b
	}
	ctx := context.Background()
	const key = "election:cluster"
	var log noticeLog
	stop, err := bs[1].Watch(key, log.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	log.waitFor(t, "resync")
	l, err := bs[0].Acquire(ctx, key, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := bs[0].Proclaim(ctx, l, "node-c"); err != nil {
		t.Fatal(err)
	}
	log.waitFor(t, string(l.Fence)+" live node-c")
	if _, err := bs[0].Extend(ctx, l.ID, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if owner, info, err := bs[1].LookupOwner(ctx, key); err != nil || owner != "node-c" || info == nil || info.Fence != l.Fence {
		t.Errorf("LookupOwner = %q, %+v, %v", owner, info, err)
	}
	if err := bs[0].Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	if err := bs[0].Announce(ctx, l); err != nil {
		t.Fatal(err)
	}
	log.waitFor(t, string(l.Fence)+" ended")
}

// TestWatchResync: when the subscription connection is re-established,
// the watchers are told notices may have been missed.
func TestWatchResync(t *testing.T) {
	srv := redistest.Start(t)
	b := newBackend(t, srv.Client(t), redistest.Prefix(t))
	t.Cleanup(func() { _ = b.Close() })
	var log noticeLog
	stop, err := b.Watch("election:resync", log.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	log.waitFor(t, "resync")
	resyncs := func() int {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.got)
	}
	if err := srv.Client(t).Do(context.Background(), "client", "kill", "type", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for resyncs() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no resync after the subscription connection was killed; got %q", log.got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
