package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// holdRW holds key in mode for a minute.
func holdRW(t *testing.T, b *redisbackend.Backend, key string, mode rwlock.Mode) lock.Lease {
	t.Helper()
	id, err := b.NewLockID(key)
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.AcquireRW(context.Background(), key, id, mode, time.Minute)
	if err != nil {
		t.Fatalf("AcquireRW(%s): %v", mode, err)
	}
	return l
}

// TestReadWrite lists and shows a read-write lock held by two readers,
// then by a writer, next to a plain lock.
func TestReadWrite(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	const key = "settings:tenant-7"
	if _, err := b.Acquire(context.Background(), "invoice:42", time.Minute); err != nil {
		t.Fatal(err)
	}
	r1, r2 := holdRW(t, b, key, rwlock.ModeRead), holdRW(t, b, key, rwlock.ModeRead)
	args := []string{"--redis", urlOf(srv), "--prefix", p}

	r := syncguard(t, append([]string{"ls", "--json"}, args...)...)
	out := lines(r.out)
	var totals struct{ Totals tally }
	if r.code != 0 || json.Unmarshal([]byte(out[len(out)-1]), &totals) != nil {
		t.Fatalf("ls --json: status %d, output:\n%s", r.code, r.out)
	}
	if tt := totals.Totals; tt.Locks != 1 || tt.ReadWrite != 1 || tt.Holders != 2 || tt.Limits != 0 || tt.Other != 0 {
		t.Errorf("totals %+v, want 1 lock, 1 read-write lock with 2 holders", tt)
	}
	if !strings.Contains(r.out, `"readWrite":{"readers":2,"writer":false,"waiters":0}`) || !strings.Contains(r.out, `"fence":"`+string(r2.Fence)) {
		t.Errorf("ls --json lacks the read-write row (2 readers, the latest fence %s):\n%s", r2.Fence, r.out)
	}
	r = syncguard(t, append([]string{"ls"}, args...)...)
	if !strings.Contains(r.out, "2 readers                 settings:tenant-7\n") || !strings.Contains(r.out, "1 read-write lock (2 holders)") {
		t.Errorf("ls: status %d, output:\n%s", r.code, r.out)
	}
	r = syncguard(t, append([]string{"show", key}, args...)...)
	for _, want := range []string{
		"state          read-write lock: held by 2 readers",
		"reader         fence " + string(r1.Fence) + "  holder " + lockdriver.HashKey(r1.ID),
		"reader         fence " + string(r2.Fence) + "  holder " + lockdriver.HashKey(r2.ID),
	} {
		if !strings.Contains(r.out, want) {
			t.Errorf("show output lacks %q:\n%s", want, r.out)
		}
	}

	for _, l := range []lock.Lease{r1, r2} {
		if err := b.Release(context.Background(), l.ID); err != nil {
			t.Fatal(err)
		}
	}
	w := holdRW(t, b, key, rwlock.ModeWrite)
	r = syncguard(t, append([]string{"ls"}, args...)...)
	if !strings.Contains(r.out, "writer "+lockdriver.HashKey(w.ID)) {
		t.Errorf("ls lacks the writer:\n%s", r.out)
	}
	r = syncguard(t, append([]string{"show", key}, args...)...)
	if !strings.Contains(r.out, "read-write lock: held by a writer") || !strings.Contains(r.out, "writer         fence "+string(w.Fence)) {
		t.Errorf("show lacks the writer:\n%s", r.out)
	}
}

// TestReleaseReadWrite: release --force on a read-write lock evicts a
// reader by --slot FENCE, refuses to guess which readers without --all or
// --slot, hands the key to the writer queued behind the readers on
// --all, and evicts a writer as a lock's holder, without a flag.
func TestReleaseReadWrite(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	ctx := context.Background()
	const key = "settings:tenant-7"
	r1, r2, r3 := holdRW(t, b, key, rwlock.ModeRead), holdRW(t, b, key, rwlock.ModeRead), holdRW(t, b, key, rwlock.ModeRead)
	release := func(more ...string) result {
		t.Helper()
		return syncguard(t, append([]string{"release", "--force", "--yes", "--redis", urlOf(srv), "--prefix", p, key}, more...)...)
	}
	held := func(l lock.Lease) bool {
		t.Helper()
		info, err := b.LookupID(ctx, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		return info != nil
	}

	r := release()
	if r.code != ExitUsage || !strings.Contains(r.err, "read-write lock held by 3 readers: add --all") || !held(r1) {
		t.Fatalf("release of readers without --all or --slot: status %d, stderr %q", r.code, r.err)
	}
	r = release("--slot", string(r2.Fence))
	if r.code != ExitOK || !strings.Contains(r.out, "released 1 reader of "+key) ||
		!strings.Contains(r.out, "removed  reader fence "+string(r2.Fence)+" (holder "+lockdriver.HashKey(r2.ID)) ||
		!strings.Contains(r.out, "now      held by 2 readers") || held(r2) || !held(r1) || !held(r3) {
		t.Fatalf("release --slot %s: status %d, stdout:\n%s\nstderr %q", r2.Fence, r.code, r.out, r.err)
	}

	// A writer waiting behind the readers gets the key once they go.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	granted := make(chan lock.Lease, 1)
	go func() {
		_, l, _, err := rwlock.HoldWrite(wctx, b, key, lock.WithTTL(time.Minute), lock.WithWait(10*time.Second))
		if err != nil {
			t.Errorf("HoldWrite: %v", err)
		}
		granted <- l
	}()
	waitWaiters(t, srv, p, key)
	r = release("--all")
	if r.code != ExitOK || !strings.Contains(r.out, "released 2 readers of "+key) || held(r1) || held(r3) {
		t.Fatalf("release --all: status %d, stdout:\n%s\nstderr %q", r.code, r.out, r.err)
	}
	w := <-granted
	if !strings.Contains(r.out, "now      held by a writer, 1 granted since") {
		t.Errorf("release --all does not tell the hand-off to the writer:\n%s", r.out)
	}
	r = release()
	if r.code != ExitOK || !strings.Contains(r.out, "released the writer of "+key) ||
		!strings.Contains(r.out, "removed  writer fence "+string(w.Fence)) || held(w) ||
		!strings.Contains(r.out, "now      free (waiters that poll take it at their next attempt)") {
		t.Fatalf("release of the writer: status %d, stdout:\n%s\nstderr %q", r.code, r.out, r.err)
	}
}

// waitWaiters waits until ls counts a waiter on key.
func waitWaiters(t *testing.T, srv *redistest.Server, p, key string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		r := syncguard(t, "show", "--json", "--redis", urlOf(srv), "--prefix", p, key)
		if strings.Contains(r.out, `"waiters": 1`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no waiter on %s:\n%s", key, r.out)
		}
	}
}

// TestLsConfigNamedKey: a key beginning with "config:" (other than the
// configuration record's name) is a lock like any other, listed by ls.
func TestLsConfigNamedKey(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	holdRW(t, b, "config:tenant-7", rwlock.ModeRead)
	if _, err := b.Acquire(context.Background(), "config:tenant-8", time.Minute); err != nil {
		t.Fatal(err)
	}
	r := syncguard(t, "ls", "--redis", urlOf(srv), "--prefix", p)
	for _, want := range []string{"1 reader                  config:tenant-7\n", "  config:tenant-8\n", "1 lock, 1 read-write lock (1 holder)"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("ls output lacks %q:\n%s", want, r.out)
		}
	}
}
