package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/multilock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMultiKey: the keys of a multi-key lock are plain locks to show, and
// release --force frees one of them alone; the holder's held context ends
// with lock.ErrLeaseLost at its next extension.
func TestMultiKey(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	held, leases, release, err := multilock.Hold(context.Background(), b, []string{"acct:1", "acct:2"}, lock.WithTTL(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = release() }()
	args := []string{"--redis", urlOf(srv), "--prefix", p}
	for _, l := range leases {
		r := syncguard(t, append([]string{"show", l.Key}, args...)...)
		if r.code != 0 || !strings.Contains(r.out, "state          locked\nfence          "+string(l.Fence)) || !strings.Contains(r.out, lockdriver.HashKey(l.ID)) {
			t.Errorf("show %s: status %d, output:\n%s", l.Key, r.code, r.out)
		}
	}
	r := syncguard(t, append([]string{"release", "--force", "--yes", "acct:2"}, args...)...)
	if r.code != 0 || !strings.Contains(r.out, "released acct:2") {
		t.Fatalf("release --force acct:2: status %d, stdout %q, stderr %q", r.code, r.out, r.err)
	}
	if locked, err := b.IsLocked(context.Background(), "acct:1"); err != nil || !locked {
		t.Errorf("acct:1 after releasing acct:2: IsLocked = %v, %v; want still held", locked, err)
	}
	select {
	case <-held.Done():
		if cause := context.Cause(held); !errors.Is(cause, lock.ErrLeaseLost) {
			t.Errorf("held ended with %v, want ErrLeaseLost", cause)
		}
	case <-time.After(5 * time.Second):
		t.Error("held did not end after one of its keys was released")
	}
}
