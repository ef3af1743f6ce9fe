package gocronlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	gocronlock "github.com/syncguard-go/syncguard/jobs/gocron"
	"github.com/syncguard-go/syncguard/lock"
)

func newLocker(t testing.TB, b lock.Backend, opts ...gocronlock.Option) *gocronlock.Locker {
	t.Helper()
	l, err := gocronlock.NewLocker(b, opts...)
	if err != nil {
		t.Fatalf("NewLocker: %v", err)
	}
	return l
}

// TestLockerWindow: a run keeps the job off every instance while it runs
// (ErrLocked) and for the rest of the window after it (ErrDone); then the
// next run gets a greater fence. The run's context carries its lease.
func TestLockerWindow(t *testing.T) {
	t.Parallel()
	in := instances(t, 2)
	const window = 300 * time.Millisecond
	a := newLocker(t, in[0].backend, gocronlock.WithWindow(window))
	b := newLocker(t, in[1].backend, gocronlock.WithWindow(window))
	jobCtx, cancel := context.WithCancel(context.Background())
	defer cancel()

	first, err := a.Lock(jobCtx, "report")
	if err != nil {
		t.Fatalf("first Lock: %v", err)
	}
	held := a.Held(jobCtx)
	lease, ok := lock.LeaseFrom(held)
	if !ok || lease.Fence == "" {
		t.Fatalf("Held(jobCtx) carries no lease: %+v, %t", lease, ok)
	}
	if got := b.Held(jobCtx); got != jobCtx {
		t.Errorf("another Locker's Held: got a context of its own, want jobCtx")
	}
	if _, err := b.Lock(jobCtx, "report"); !errors.Is(err, lock.ErrLocked) {
		t.Errorf("Lock while it runs: got %v, want ErrLocked", err)
	}
	if err := first.Unlock(jobCtx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if held.Err() == nil {
		t.Errorf("the run's context lives on after Unlock")
	}
	if got := a.Held(jobCtx); got != jobCtx {
		t.Errorf("Held after Unlock: got the run's context, want jobCtx")
	}
	if _, err := b.Lock(jobCtx, "report"); !errors.Is(err, gocronlock.ErrDone) {
		t.Errorf("Lock within the window: got %v, want ErrDone", err)
	}
	time.Sleep(window + 50*time.Millisecond)
	next, err := b.Lock(jobCtx, "report")
	if err != nil {
		t.Fatalf("Lock after the window: %v", err)
	}
	nextLease, _ := lock.LeaseFrom(b.Held(jobCtx))
	if nextLease.Fence.Compare(lease.Fence) <= 0 {
		t.Errorf("next run's fence %s, want greater than %s", nextLease.Fence, lease.Fence)
	}
	if err := next.Unlock(jobCtx); err != nil {
		t.Errorf("Unlock: %v", err)
	}
}

// TestLockerNoWindow: WithWindow(0) holds the key only while the job runs.
func TestLockerNoWindow(t *testing.T) {
	t.Parallel()
	in := instances(t, 2)
	a := newLocker(t, in[0].backend, gocronlock.WithWindow(0))
	b := newLocker(t, in[1].backend, gocronlock.WithWindow(0))
	ctx := context.Background()
	run, err := a.Lock(ctx, "report")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, "report"); !errors.Is(err, lock.ErrLocked) {
		t.Errorf("Lock while it runs: got %v, want ErrLocked", err)
	}
	if err := run.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	run, err = b.Lock(ctx, "report")
	if err != nil {
		t.Fatalf("Lock after the run, no window: %v", err)
	}
	_ = run.Unlock(ctx)
}

// TestLockerLongRun: a run longer than the window leaves no marker, and the
// next scheduled time runs at once.
func TestLockerLongRun(t *testing.T) {
	t.Parallel()
	in := instances(t, 1)
	l := newLocker(t, in[0].backend, gocronlock.WithWindow(50*time.Millisecond))
	ctx := context.Background()
	run, err := l.Lock(ctx, "report")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(80 * time.Millisecond)
	if err := run.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	run, err = l.Lock(ctx, "report")
	if err != nil {
		t.Fatalf("Lock after a run longer than the window: %v", err)
	}
	_ = run.Unlock(ctx)
}
