package lock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"go.uber.org/goleak"
)

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, timeout time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitDone waits for ctx to end, failing the test after timeout.
func waitDone(t *testing.T, ctx context.Context, timeout time.Duration, what string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(timeout):
		t.Fatalf("%s not cancelled within %v", what, timeout)
	}
}

// noLeak fails t when goroutines other than base's are still running
// (goleak.Find retries while they wind down): a heartbeat outlived its
// stop.
func noLeak(t *testing.T, base goleak.Option) {
	t.Helper()
	if err := goleak.Find(base); err != nil {
		t.Errorf("goroutines left after stop: %v", err)
	}
}

// lease acquires key on f for ttl.
func lease(t *testing.T, f *fakeBackend, key string, ttl time.Duration) lock.Lease {
	t.Helper()
	l, err := f.Acquire(context.Background(), key, ttl)
	if err != nil {
		t.Fatalf("acquire %q: %v", key, err)
	}
	return l
}

// counter is a goroutine-safe count for Keep's callbacks.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) inc() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func TestKeepExtends(t *testing.T) {
	const ttl = 300 * time.Millisecond
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the heartbeat must not outlive stop
	f := newFake()
	start := time.Now()
	l := lease(t, f, "k", ttl)
	var mu sync.Mutex
	var exps []time.Time
	held, stop := lock.Keep(context.Background(), f, l, lock.WithHeartbeat(lock.Heartbeat{OnExtend: func(e time.Time) {
		mu.Lock()
		exps = append(exps, e)
		mu.Unlock()
	}}))
	waitFor(t, 10*time.Second, func() bool { return f.count("Extend") >= 3 }, "three extensions")
	// Three extensions one interval (ttl/3) apart cannot come before a TTL.
	if elapsed := time.Since(start); elapsed < ttl {
		t.Errorf("three extensions after %v, want >= %v (one per ttl/3)", elapsed, ttl)
	}
	if !f.held("k") || held.Err() != nil {
		t.Errorf("past the original TTL: held = %v, held.Err() = %v; want true, nil", f.held("k"), held.Err())
	}
	if err := stop(); err != nil {
		t.Errorf("stop() = %v, want nil", err)
	}
	if held.Err() == nil {
		t.Errorf("held not cancelled by stop")
	}
	if cause := context.Cause(held); errors.Is(cause, lock.ErrLeaseLost) {
		t.Errorf("context.Cause(held) = %v after a normal stop, want not ErrLeaseLost", cause)
	}
	if err := stop(); err != nil {
		t.Errorf("second stop() = %v, want nil", err)
	}
	n := f.count("Extend")
	time.Sleep(ttl) // three intervals: long enough for a leaked heartbeat to show
	if got := f.count("Extend"); got != n {
		t.Errorf("Extend calls after stop = %d, want none", got-n)
	}
	mu.Lock()
	for i := 1; i < len(exps); i++ {
		if exps[i].Before(exps[i-1]) {
			t.Errorf("Heartbeat.OnExtend expiries not increasing: %v then %v", exps[i-1], exps[i])
		}
	}
	if len(exps) < 3 {
		t.Errorf("Heartbeat.OnExtend calls = %d, want >= 3", len(exps))
	}
	mu.Unlock()
}

func TestKeepInterval(t *testing.T) {
	f := newFake()
	l := lease(t, f, "k", time.Minute)
	_, stop := lock.Keep(context.Background(), f, l, lock.WithHeartbeat(lock.Heartbeat{Interval: 20 * time.Millisecond}))
	defer stop()
	// With the default interval (20s) this would time out.
	waitFor(t, 10*time.Second, func() bool { return f.count("Extend") >= 3 }, "three extensions")
}

func TestKeepDetectsLoss(t *testing.T) {
	const ttl = 300 * time.Millisecond
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the heartbeat must not outlive stop
	f := newFake()
	l := lease(t, f, "k", ttl)
	held, stop := lock.Keep(context.Background(), f, l)
	f.steal("k")
	waitDone(t, held, 3*time.Second, "held")
	cause := context.Cause(held)
	if !errors.Is(cause, lock.ErrLeaseLost) {
		t.Errorf("context.Cause(held) = %v, want ErrLeaseLost", cause)
	}
	// Detected by the next extension, not by waiting for the deadline.
	if !errors.Is(cause, lock.ErrNotHeld) {
		t.Errorf("context.Cause(held) = %v, want it to wrap the backend's ErrNotHeld", cause)
	}
	err := stop()
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Errorf("stop() = %v, want ErrLeaseLost", err)
	}
	if again := stop(); again != err {
		t.Errorf("second stop() = %v, want the same %v", again, err)
	}
}

func TestKeepRetriesTransientErrors(t *testing.T) {
	const ttl = time.Second
	f := newFake()
	l := lease(t, f, "k", ttl)
	var mu sync.Mutex
	failures := 2
	f.setHook(func(_ context.Context, method string) error {
		mu.Lock()
		defer mu.Unlock()
		if method == "Extend" && failures > 0 {
			failures--
			return &lock.Error{Code: lock.CodeNetworkTimeout, Op: "extend"}
		}
		return nil
	})
	var errs, exts counter
	held, stop := lock.Keep(context.Background(), f, l,
		lock.WithHeartbeat(lock.Heartbeat{OnError: func(error) { errs.inc() }, OnExtend: func(time.Time) { exts.inc() }}))
	defer stop()
	// Two failures, the retry that succeeds, then a regular extension.
	waitFor(t, 10*time.Second, func() bool { return exts.get() >= 2 }, "two successful extensions")
	if held.Err() != nil {
		t.Errorf("held cancelled (%v), want the lease kept after a successful retry", context.Cause(held))
	}
	if got := errs.get(); got != 2 {
		t.Errorf("Heartbeat.OnError calls = %d, want 2", got)
	}
	if !f.held("k") {
		t.Errorf("lease gone from the backend, want it kept")
	}
	if err := stop(); err != nil {
		t.Errorf("stop() = %v, want nil", err)
	}
}

func TestKeepGivesUpAtDeadline(t *testing.T) {
	const ttl = 300 * time.Millisecond
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the heartbeat must not outlive stop
	f := newFake()
	f.setHook(func(_ context.Context, method string) error {
		if method == "Extend" {
			return &lock.Error{Code: lock.CodeNetworkTimeout, Op: "extend"}
		}
		return nil
	})
	start := time.Now()
	l := lease(t, f, "k", ttl)
	var errs counter
	held, stop := lock.Keep(context.Background(), f, l, lock.WithHeartbeat(lock.Heartbeat{OnError: func(error) { errs.inc() }}))
	waitDone(t, held, 5*time.Second, "held")
	if elapsed := time.Since(start); elapsed < ttl {
		t.Errorf("lease declared lost after %v, want not before its TTL %v", elapsed, ttl)
	}
	cause := context.Cause(held)
	if !errors.Is(cause, lock.ErrLeaseLost) || errors.Is(cause, lock.ErrNotHeld) {
		t.Errorf("context.Cause(held) = %v, want ErrLeaseLost (expired), not ErrNotHeld", cause)
	}
	if errs.get() < 1 {
		t.Errorf("Heartbeat.OnError calls = %d, want >= 1", errs.get())
	}
	if err := stop(); !errors.Is(err, lock.ErrLeaseLost) {
		t.Errorf("stop() = %v, want ErrLeaseLost", err)
	}
}

func TestKeepCallerCancelled(t *testing.T) {
	f := newFake()
	l := lease(t, f, "k", time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	held, stop := lock.Keep(ctx, f, l)
	cancel()
	waitDone(t, held, 3*time.Second, "held")
	if cause := context.Cause(held); !errors.Is(cause, context.Canceled) || errors.Is(cause, lock.ErrLeaseLost) {
		t.Errorf("context.Cause(held) = %v, want context.Canceled", cause)
	}
	if err := stop(); err != nil {
		t.Errorf("stop() = %v, want nil (the lease was not lost)", err)
	}
}

func TestKeepInvalid(t *testing.T) {
	f := newFake()
	valid := lease(t, f, "k", time.Minute)
	zeroTTL := valid
	zeroTTL.TTL = 0
	tests := []struct {
		desc string
		l    lock.Lease
		opts []lock.Option
	}{
		{"zero TTL", zeroTTL, nil},
		{"negative interval", valid, []lock.Option{lock.WithHeartbeat(lock.Heartbeat{Interval: -time.Second})}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			held, stop := lock.Keep(context.Background(), f, tt.l, tt.opts...)
			if held.Err() == nil {
				t.Fatalf("held not cancelled for an invalid lease")
			}
			cause := context.Cause(held)
			if !errors.Is(cause, lock.ErrLeaseLost) || lock.CodeOf(cause) != lock.CodeInvalidArgument {
				t.Errorf("context.Cause(held) = %v, want ErrLeaseLost with InvalidArgument", cause)
			}
			if err := stop(); err != cause {
				t.Errorf("stop() = %v, want %v", err, cause)
			}
		})
	}
	if got := f.count("Extend"); got != 0 {
		t.Errorf("Extend calls = %d, want 0", got)
	}
}
