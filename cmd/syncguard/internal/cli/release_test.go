package cli

import (
	"context"
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

// TestReleaseForce frees a held key: the lock goes, the fence counter
// stays, the next holder gets a larger fence, the evicted holder finds its
// lease gone.
func TestReleaseForce(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()

	l, err := b.Acquire(ctx, "invoice:42", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := admin.StorageKeys(b, "invoice:42")
	r := syncguard(t, "release", "--force", "--yes", "--redis", urlOf(srv), "--prefix", p, "invoice:42")
	if r.code != 0 || r.err != "" {
		t.Fatalf("release: status %d, stderr %q", r.code, r.err)
	}
	for _, want := range []string{"released invoice:42", "removed  " + keys.Lock + " (fence " + string(l.Fence),
		"holder " + lockdriver.HashKey(l.ID), "kept     " + keys.Fence + " = 1"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("release output lacks %q:\n%s", want, r.out)
		}
	}
	if strings.Contains(r.out, l.ID) {
		t.Errorf("release printed the lock id:\n%s", r.out)
	}
	if locked, err := b.IsLocked(ctx, "invoice:42"); err != nil || locked {
		t.Errorf("IsLocked after release --force = %v, %v; want false", locked, err)
	}
	if v := rdb.Get(ctx, keys.Fence).Val(); v != "1" {
		t.Errorf("fence counter = %q after release --force, want 1", v)
	}
	if err := b.Release(ctx, l.ID); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("the evicted holder's Release = %v, want ErrNotHeld", err)
	}
	next, err := b.Acquire(ctx, "invoice:42", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if next.Fence.Compare(l.Fence) <= 0 {
		t.Errorf("next fence %s, want above the evicted %s", next.Fence, l.Fence)
	}

	// Nothing to release is a failure with one line.
	r = syncguard(t, "release", "--force", "--yes", "--redis", urlOf(srv), "--prefix", p, "free")
	if r.code != ExitFailure || r.out != "" || !strings.Contains(r.err, "free is not locked") {
		t.Errorf("release of a free key: status %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
}

// TestReleaseForceWakesWaiter checks that a lock.Acquire waiting on the key
// gets it at once, as after its holder's release, not at its next poll
// (its backoff starts at 3 s).
func TestReleaseForceWakesWaiter(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()

	if _, err := b.Acquire(ctx, "stuck", time.Minute); err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		defer close(got)
		_, err := lock.Acquire(ctx, b, "stuck", lock.WithTTL(time.Minute), lock.WithWait(5*time.Second),
			lock.WithRetry(lock.Retry{BaseDelay: 3 * time.Second}))
		if err != nil {
			t.Errorf("waiter: %v", err)
			return
		}
		got <- time.Now()
	}()
	time.Sleep(300 * time.Millisecond) // the waiter queued, and sleeps
	r := syncguard(t, "show", "--redis", urlOf(srv), "--prefix", p, "stuck")
	if !strings.Contains(r.out, "waiters        1\n") {
		t.Errorf("show of a key with a waiter queued:\n%s", r.out)
	}
	start := time.Now()
	r = syncguard(t, "release", "--force", "--yes", "--redis", urlOf(srv), "--prefix", p, "stuck")
	if r.code != 0 {
		t.Fatalf("release: status %d, stderr %q", r.code, r.err)
	}
	if !strings.Contains(r.out, "handed on to a waiter") {
		t.Errorf("release output does not say the lock went to the waiter:\n%s", r.out)
	}
	if at, ok := <-got; ok {
		if d := at.Sub(start); d > time.Second {
			t.Errorf("the waiter acquired %v after release --force started, want well under 1s", d)
		}
	}
}

// TestReleaseConfirmation checks the question on a terminal and the
// refusal without one.
func TestReleaseConfirmation(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx := context.Background()
	if _, err := b.Acquire(ctx, "k", time.Minute); err != nil {
		t.Fatal(err)
	}
	args := []string{"release", "--force", "--redis", urlOf(srv), "--prefix", p, "k"}
	locked := func() bool {
		t.Helper()
		ok, err := b.IsLocked(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	r := syncguard(t, args...) // stdin is not a terminal, no --yes
	if r.code != ExitUsage || !strings.Contains(r.err, "add --yes") || !locked() {
		t.Errorf("release without a terminal or --yes: status %d, stderr %q, locked %v", r.code, r.err, locked())
	}
	r = syncguardWith(t, Env{Stdin: strings.NewReader("n\n"), Interactive: true}, args...)
	if r.code != ExitFailure || !strings.Contains(r.err, "[y/N]") || !strings.Contains(r.err, "not confirmed") || !locked() {
		t.Errorf("release answered n: status %d, stderr %q, locked %v", r.code, r.err, locked())
	}
	r = syncguardWith(t, Env{Stdin: strings.NewReader("y\n"), Interactive: true}, args...)
	if r.code != 0 || !strings.Contains(r.out, "released k") || locked() {
		t.Errorf("release answered y: status %d, stdout %q, stderr %q, locked %v", r.code, r.out, r.err, locked())
	}
}
