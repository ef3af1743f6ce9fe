package lock_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// These tests cancel the caller's context at every stage of Do and check
// two things: our code never keeps a lease alive after Do returns (it is
// released, or at worst left to its TTL with no more heartbeats), and no
// goroutine outlives Do (goleak).

// noMoreExtends checks that Extend is not called any more: Do's heartbeat
// stopped with Do.
func noMoreExtends(t *testing.T, f *fakeBackend, wait time.Duration) {
	t.Helper()
	before := f.count("Extend")
	time.Sleep(wait)
	if after := f.count("Extend"); after != before {
		t.Errorf("Extend calls after Do returned: %d -> %d, want none (heartbeat still running)", before, after)
	}
}

func TestHostileCancelBeforeAcquire(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFake()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := lock.Do(ctx, f, "k", func(context.Context, lock.Lease) error { called = true; return nil })
	if !errors.Is(err, context.Canceled) || lock.CodeOf(err) != lock.CodeAborted {
		t.Errorf("Do with a cancelled ctx = %v, want Aborted matching context.Canceled", err)
	}
	if called || f.count("Acquire") != 0 || f.held("k") {
		t.Errorf("fn called = %v, Acquire calls = %d, held = %v; want false, 0, false", called, f.count("Acquire"), f.held("k"))
	}
}

func TestHostileCancelWhileWaiting(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFake()
	other := hold(t, f, "k")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- lock.Do(ctx, f, "k", func(context.Context, lock.Lease) error {
			t.Error("fn ran while another lease held the key")
			return nil
		}, lock.WithWait(time.Minute), lock.WithRetry(lock.Retry{MaxRetries: 1000, BaseDelay: 5 * time.Millisecond}))
	}()
	waitFor(t, time.Second, func() bool { return attempts(f) >= 2 }, "a retry")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || lock.CodeOf(err) != lock.CodeAborted {
			t.Errorf("Do cancelled while waiting = %v, want Aborted matching context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Do did not return after its context was cancelled while waiting")
	}
	// The other holder is untouched.
	info, err := f.LookupKey(context.Background(), "k")
	if err != nil || info == nil || info.Fence != other.Fence || info.IDHash != lockdriver.HashKey(other.ID) {
		t.Errorf("lease on k after the cancelled wait = %+v, %v; want the other holder's (fence %s)", info, err, other.Fence)
	}
	if f.count("Release") != 0 {
		t.Errorf("Release calls = %d, want 0 (nothing was acquired)", f.count("Release"))
	}
}

// TestHostileCancelDuringAcquireCall cancels while the backend's Acquire is
// in flight (a slow network): Do returns at once and runs nothing.
func TestHostileCancelDuringAcquireCall(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFake()
	entered := make(chan struct{})
	f.setHook(func(ctx context.Context, method string) error {
		if method == "Acquire" {
			close(entered)
			<-ctx.Done()
			return &lock.Error{Code: lock.CodeAborted, Op: "acquire", Err: ctx.Err()}
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- lock.Do(ctx, f, "k", func(context.Context, lock.Lease) error {
			t.Error("fn ran although Acquire failed")
			return nil
		})
	}()
	<-entered
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Do = %v, want an error matching context.Canceled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Do did not return after its context was cancelled during Acquire")
	}
	if f.held("k") {
		t.Error("k held after a cancelled Acquire")
	}
}

func TestHostileCancelWhileHolding(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFake()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ttl = 90 * time.Millisecond
	err := lock.Do(ctx, f, "k", func(ctx context.Context, _ lock.Lease) error {
		time.Sleep(ttl) // long enough for a heartbeat
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}, lock.WithTTL(ttl))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do = %v, want fn's context.Canceled", err)
	}
	if f.held("k") || f.count("Release") != 1 {
		t.Errorf("after Do: held = %v, Release calls = %d; want false, 1", f.held("k"), f.count("Release"))
	}
	if f.count("Extend") == 0 {
		t.Error("no heartbeat ran while fn held the lease; the test did not cover it")
	}
	noMoreExtends(t, f, ttl)
}

// TestHostileCancelDuringRelease uses a backend whose Release hangs until
// its context ends. Do must give up after the release timeout, report the
// failure, stop heartbeating, and so leave the lease to expire by its TTL.
func TestHostileCancelDuringRelease(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFake()
	f.setHook(func(ctx context.Context, method string) error {
		if method == "Release" {
			<-ctx.Done()
			return &lock.Error{Code: lock.CodeNetworkTimeout, Op: "release", Err: ctx.Err()}
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const ttl = 150 * time.Millisecond
	var reported []error
	start := time.Now()
	err := lock.Do(ctx, f, "k", func(context.Context, lock.Lease) error {
		cancel() // the caller goes away while we hold the lock
		return nil
	}, lock.WithTTL(ttl), lock.WithReleaseTimeout(50*time.Millisecond),
		lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) { reported = append(reported, err) }))
	elapsed := time.Since(start)
	if err != nil {
		t.Errorf("Do = %v, want nil (fn succeeded; the release failure goes to the hook)", err)
	}
	if elapsed > time.Second {
		t.Errorf("Do took %v with a hanging Release, want about the release timeout", elapsed)
	}
	if len(reported) != 1 || lock.CodeOf(reported[0]) != lock.CodeNetworkTimeout {
		t.Errorf("WithReleaseErrorHandler got %v, want one NetworkTimeout", reported)
	}
	noMoreExtends(t, f, ttl)
	if f.held("k") {
		t.Errorf("k still held %v after Do returned, past its TTL %v", time.Since(start), ttl)
	}
}

// TestHostileCancelAnywhere runs many Do calls on a few keys through a
// backend with random latency on every call, and cancels each at a random
// moment: before, during or after acquisition, inside fn, or during
// release. After all return, no heartbeat runs, every key is free within
// one TTL, and no goroutine is left.
func TestHostileCancelAnywhere(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFake()
	f.setHook(func(ctx context.Context, method string) error {
		d := time.Duration(rand.N(3000)) * time.Microsecond
		select {
		case <-ctx.Done():
			return &lock.Error{Code: lock.CodeAborted, Op: method, Err: ctx.Err()}
		case <-time.After(d):
			return nil
		}
	})
	const ttl = 60 * time.Millisecond
	keys := []string{"a", "b", "c", "d", "e", "f"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	record := func(o string) {
		mu.Lock()
		defer mu.Unlock()
		outcomes[o]++
	}
	for w := 0; w < 12; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				ctx, cancel := context.WithCancel(context.Background())
				timer := time.AfterFunc(time.Duration(rand.N(40))*time.Millisecond, cancel)
				err := lock.Do(ctx, f, keys[rand.N(len(keys))], func(ctx context.Context, _ lock.Lease) error {
					select {
					case <-ctx.Done():
						record("cancelled while holding")
						return ctx.Err()
					case <-time.After(time.Duration(rand.N(30)) * time.Millisecond):
						return nil
					}
				}, lock.WithTTL(ttl), lock.WithWait(100*time.Millisecond), lock.WithRetry(lock.Retry{BaseDelay: 2 * time.Millisecond}),
					lock.WithReleaseTimeout(20*time.Millisecond), lock.WithReleaseErrorHandler(func(lock.Lease, error) {}))
				timer.Stop()
				cancel()
				switch {
				case err == nil:
					record("ok")
				case errors.Is(err, context.Canceled):
					record("cancelled")
				case errors.Is(err, lock.ErrLocked):
					record("busy")
				default:
					record("other")
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("outcomes: %v", outcomes)
	if outcomes["ok"] == 0 || outcomes["cancelled"] == 0 || outcomes["cancelled while holding"] == 0 {
		t.Errorf("outcomes %v: want completed runs and runs cancelled both before and while holding", outcomes)
	}
	noMoreExtends(t, f, ttl)
	for _, k := range keys {
		if f.held(k) {
			t.Errorf("%s still held one TTL after every Do returned", k)
		}
	}
}
