package lock_test

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// hold takes key on f for an hour, as another process would, and returns
// the lease. It counts as one Acquire call on f.
func hold(t *testing.T, f *fakeBackend, key string) lock.Lease {
	t.Helper()
	l, err := f.Acquire(context.Background(), key, time.Hour)
	if err != nil {
		t.Fatalf("hold %q: %v", key, err)
	}
	return l
}

// attempts returns the Acquire calls made on f after hold.
func attempts(f *fakeBackend) int { return f.count("Acquire") - 1 }

func TestAcquireRetriesUntilFree(t *testing.T) {
	f := newFake()
	hold(t, f, "k")
	f.setHook(func(_ context.Context, method string) error {
		// The hold was call 1; free the key just before the third attempt.
		if method == "Acquire" && f.count("Acquire") == 4 {
			f.steal("k")
		}
		return nil
	})
	l, err := lock.Acquire(context.Background(), f, "k",
		lock.WithRetry(lock.Retry{BaseDelay: time.Millisecond, NoJitter: true}))
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if got, want := attempts(f), 3; got != want {
		t.Errorf("attempts = %d, want %d", got, want)
	}
	if l.Key != "k" || l.Fence != "000000000000002" || !f.held("k") {
		t.Errorf("lease = %+v (held %v), want key k, fence 2, held", l, f.held("k"))
	}
}

func TestAcquireGivesUp(t *testing.T) {
	f := newFake()
	holder := hold(t, f, "k")
	_, err := lock.Acquire(context.Background(), f, "k",
		lock.WithWait(100*time.Millisecond), lock.WithRetry(lock.Retry{BaseDelay: 5 * time.Millisecond}))
	wantCode(t, err, lock.CodeAcquisitionTimeout)
	if !errors.Is(err, lock.ErrLocked) {
		t.Errorf("errors.Is(%v, ErrLocked) = false, want true", err)
	}
	if !errors.Is(err, &lock.Error{Code: lock.CodeAcquisitionTimeout, Op: "acquire"}) {
		t.Errorf("errors.Is(%v, AcquisitionTimeout/acquire) = false, want true", err)
	}
	var le *lock.LockedError
	if !errors.As(err, &le) {
		t.Fatalf("errors.As(%v, *LockedError) = false, want true", err)
	}
	if !le.ExpiresAt.Equal(holder.ExpiresAt) {
		t.Errorf("LockedError.ExpiresAt = %v, want the holder's %v", le.ExpiresAt, holder.ExpiresAt)
	}
	if got := attempts(f); got < 2 {
		t.Errorf("attempts = %d, want >= 2 (it should retry within the timeout)", got)
	}
}

func TestAcquireTimeoutZeroTriesOnce(t *testing.T) {
	f := newFake()
	hold(t, f, "k")
	_, err := lock.Acquire(context.Background(), f, "k", lock.WithWait(0))
	wantCode(t, err, lock.CodeAcquisitionTimeout)
	if got := attempts(f); got != 1 {
		t.Errorf("attempts = %d, want 1", got)
	}
}

func TestAcquireMaxRetries(t *testing.T) {
	tests := []struct {
		desc     string
		retries  int
		attempts int
	}{
		{"zero: the default", 0, lockdriver.DefaultMaxRetries + 1},
		{"one retry", 1, 2},
		{"three retries", 3, 4},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			hold(t, f, "k")
			_, err := lock.Acquire(context.Background(), f, "k", lock.WithWait(time.Minute),
				lock.WithRetry(lock.Retry{MaxRetries: tt.retries, BaseDelay: time.Millisecond, Fixed: true}))
			wantCode(t, err, lock.CodeAcquisitionTimeout)
			if got, want := attempts(f), tt.attempts; got != want {
				t.Errorf("attempts = %d, want %d", got, want)
			}
		})
	}
}

func TestAcquireSystemErrorNotRetried(t *testing.T) {
	down := &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire", Msg: "connection refused"}
	tests := []struct {
		desc string
		err  error
	}{
		{"lock.Error", down},
		{"foreign error", io.ErrUnexpectedEOF},
		{"not held", &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			f.setHook(func(context.Context, string) error { return tt.err })
			_, err := lock.Acquire(context.Background(), f, "k", lock.WithRetry(lock.Retry{BaseDelay: time.Millisecond}))
			if err != tt.err {
				t.Errorf("Acquire error = %v, want %v unchanged", err, tt.err)
			}
			if got := f.count("Acquire"); got != 1 {
				t.Errorf("attempts = %d, want 1", got)
			}
		})
	}
}

func TestAcquireCancelWhileWaiting(t *testing.T) {
	f := newFake()
	hold(t, f, "k")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	f.setHook(func(_ context.Context, method string) error {
		if method == "Acquire" {
			// Cancel while Acquire sleeps before its second attempt.
			once.Do(func() { time.AfterFunc(50*time.Millisecond, cancel) })
		}
		return nil
	})
	start := time.Now()
	// One 20s backoff outlasts the check below, so a sleep that ignores
	// ctx fails the test instead of hanging it.
	_, err := lock.Acquire(ctx, f, "k",
		lock.WithRetry(lock.Retry{MaxRetries: 1, BaseDelay: 20 * time.Second, NoJitter: true}), lock.WithWait(time.Hour))
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("Acquire returned after %v, want promptly after the cancel (the backoff was 20s)", elapsed)
	}
	wantCode(t, err, lock.CodeAborted)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(%v, context.Canceled) = false, want true", err)
	}
	if errors.Is(err, lock.ErrLocked) {
		t.Errorf("errors.Is(%v, ErrLocked) = true, want false", err)
	}
	if got := attempts(f); got != 1 {
		t.Errorf("attempts = %d, want 1", got)
	}
}

func TestAcquireContextDoneBefore(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	tests := []struct {
		desc string
		ctx  context.Context
		want error
	}{
		{"cancelled", cancelled, context.Canceled},
		{"deadline exceeded", expired, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			_, err := lock.Acquire(tt.ctx, f, "k")
			wantCode(t, err, lock.CodeAborted)
			if !errors.Is(err, tt.want) {
				t.Errorf("errors.Is(%v, %v) = false, want true", err, tt.want)
			}
			if got := f.count("Acquire"); got != 0 {
				t.Errorf("backend calls = %d, want 0", got)
			}
		})
	}
}

func TestAcquireDelayClampedToTimeout(t *testing.T) {
	f := newFake()
	hold(t, f, "k")
	start := time.Now()
	_, err := lock.Acquire(context.Background(), f, "k",
		lock.WithWait(150*time.Millisecond), lock.WithRetry(lock.Retry{BaseDelay: time.Hour}))
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("Acquire returned after %v, want about the 150ms timeout", elapsed)
	}
	wantCode(t, err, lock.CodeAcquisitionTimeout)
	// One attempt at once, one when the clamped wait ends at the deadline.
	if got := attempts(f); got != 2 {
		t.Errorf("attempts = %d, want 2", got)
	}
}

func TestAcquireMaxDelayCaps(t *testing.T) {
	f := newFake()
	hold(t, f, "k")
	start := time.Now()
	_, err := lock.Acquire(context.Background(), f, "k",
		lock.WithRetry(lock.Retry{MaxRetries: 3, BaseDelay: time.Hour, MaxDelay: 5 * time.Millisecond}),
		lock.WithWait(2*time.Hour))
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("Acquire returned after %v, want well under a second (delays capped at 5ms)", elapsed)
	}
	wantCode(t, err, lock.CodeAcquisitionTimeout)
	if got := attempts(f); got != 4 {
		t.Errorf("attempts = %d, want 4", got)
	}
}

func TestAcquireBackoff(t *testing.T) {
	const base = 10 * time.Millisecond
	tests := []struct {
		desc   string
		fixed  bool
		minGap func(i int) time.Duration // lower bound of the wait after attempt i
	}{
		{"exponential", false, func(i int) time.Duration { return base << i }},
		{"fixed", true, func(int) time.Duration { return base }},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			hold(t, f, "k")
			attempts := acquireTimes(f)
			_, err := lock.Acquire(context.Background(), f, "k",
				lock.WithRetry(lock.Retry{MaxRetries: 5, BaseDelay: base, Fixed: tt.fixed, NoJitter: true}),
				lock.WithWait(time.Minute))
			wantCode(t, err, lock.CodeAcquisitionTimeout)
			at := attempts()
			if len(at) != 6 {
				t.Fatalf("attempts = %d, want 6", len(at))
			}
			// Timers never fire early, so only lower bounds are safe here.
			for i := 1; i < len(at); i++ {
				if gap, want := at[i].Sub(at[i-1]), tt.minGap(i-1); gap < want {
					t.Errorf("gap before attempt %d = %v, want >= %v", i+1, gap, want)
				}
			}
		})
	}
}

func TestBadOptions(t *testing.T) {
	tests := []struct {
		desc string
		opt  lock.Option
	}{
		{"zero ttl", lock.WithTTL(0)},
		{"negative ttl", lock.WithTTL(-time.Second)},
		{"negative timeout", lock.WithWait(-1)},
		{"negative retries", lock.WithRetry(lock.Retry{MaxRetries: -1})},
		{"negative base delay", lock.WithRetry(lock.Retry{BaseDelay: -1})},
		{"negative max delay", lock.WithRetry(lock.Retry{MaxDelay: -1})},
		{"zero release timeout", lock.WithReleaseTimeout(0)},
		{"watch without a holder", lock.WithWatch(make(chan struct{}), nil)},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			_, err := lock.Acquire(context.Background(), f, "k", tt.opt)
			wantCode(t, err, lock.CodeInvalidArgument)
			called := false
			err = lock.Do(context.Background(), f, "k", func(context.Context, lock.Lease) error {
				called = true
				return nil
			}, tt.opt)
			wantCode(t, err, lock.CodeInvalidArgument)
			if called || f.count("Acquire") != 0 {
				t.Errorf("fn called = %v, backend calls = %d, want neither", called, f.count("Acquire"))
			}
		})
	}
}

func TestDoBadArguments(t *testing.T) {
	var nilCtx context.Context
	tests := []struct {
		desc string
		ctx  context.Context
		fn   func(context.Context, lock.Lease) error
	}{
		{"nil fn", context.Background(), nil},
		{"nil ctx", nilCtx, func(context.Context, lock.Lease) error { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			err := lock.Do(tt.ctx, f, "k", tt.fn)
			wantCode(t, err, lock.CodeInvalidArgument)
			if got := f.count("Acquire"); got != 0 {
				t.Errorf("backend calls = %d, want 0", got)
			}
		})
	}
}

func TestDoReleases(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		desc  string
		fnErr error
	}{
		{"fn returns nil", nil},
		{"fn returns an error", errBoom},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			var heldInside bool
			var lease lock.Lease
			err := lock.Do(context.Background(), f, "k", func(ctx context.Context, l lock.Lease) error {
				heldInside = f.held("k") && ctx.Err() == nil
				lease = l
				return tt.fnErr
			})
			if err != tt.fnErr {
				t.Errorf("Do = %v, want fn's error %v", err, tt.fnErr)
			}
			if !heldInside {
				t.Errorf("key not held (or ctx done) while fn ran")
			}
			if lease.Key != "k" || lockdriver.ValidateLockID(lease.ID) != nil || lease.TTL != lockdriver.DefaultTTL {
				t.Errorf("fn's lease = %+v, want key k, a valid id, the default TTL", lease)
			}
			if f.held("k") {
				t.Errorf("key still held after Do returned")
			}
			if got := f.count("Release"); got != 1 {
				t.Errorf("Release calls = %d, want 1", got)
			}
		})
	}
}

func TestDoReleasesOnPanic(t *testing.T) {
	f := newFake()
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic value %q", r, "boom")
			}
		}()
		_ = lock.Do(context.Background(), f, "k", func(context.Context, lock.Lease) error {
			panic("boom")
		})
		t.Errorf("Do returned, want the panic to propagate")
	}()
	if f.held("k") {
		t.Errorf("key still held after fn panicked")
	}
	if got := f.count("Release"); got != 1 {
		t.Errorf("Release calls = %d, want 1", got)
	}
}

func TestDoReleasesWhenCallerCancelled(t *testing.T) {
	f := newFake()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	releaseCtxErr := errors.New("Release not called")
	var releaseHasDeadline bool
	f.setHook(func(ctx context.Context, method string) error {
		if method == "Release" {
			releaseCtxErr = ctx.Err()
			_, releaseHasDeadline = ctx.Deadline()
		}
		return nil
	})
	reported := 0
	err := lock.Do(ctx, f, "k", func(ctx context.Context, _ lock.Lease) error {
		cancel()
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Errorf("fn's ctx not cancelled with the caller's")
		}
		return ctx.Err()
	}, lock.WithReleaseErrorHandler(func(lock.Lease, error) { reported++ }))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Do = %v, want fn's context.Canceled", err)
	}
	if releaseCtxErr != nil {
		t.Errorf("Release ran with ctx.Err() = %v, want a live context", releaseCtxErr)
	}
	if !releaseHasDeadline {
		t.Errorf("Release ctx has no deadline, want the release timeout")
	}
	if f.held("k") || reported != 0 {
		t.Errorf("held after Do = %v, release errors reported = %d, want false, 0", f.held("k"), reported)
	}
}

func TestDoOnReleaseError(t *testing.T) {
	down := &lock.Error{Code: lock.CodeServiceUnavailable, Op: "release"}
	f := newFake()
	var mu sync.Mutex
	released := 0
	f.setHook(func(_ context.Context, method string) error {
		mu.Lock()
		defer mu.Unlock()
		if method == "Release" {
			released++
			if released%2 == 1 { // each Do's first release; the retry then succeeds
				return down
			}
		}
		return nil
	})
	var calls int
	var gotLease lock.Lease
	var gotErr error
	err := lock.Do(context.Background(), f, "k", func(context.Context, lock.Lease) error { return nil },
		lock.WithReleaseErrorHandler(func(l lock.Lease, err error) {
			calls++
			gotLease, gotErr = l, err
		}))
	if err != nil {
		t.Errorf("Do = %v, want nil (a release failure is not fn's failure)", err)
	}
	if calls != 1 || !errors.Is(gotErr, down) || gotLease.Key != "k" {
		t.Errorf("WithReleaseErrorHandler calls = %d, err = %v, lease key = %q; want 1, %v, k", calls, gotErr, gotLease.Key, down)
	}
	waitFor(t, 5*time.Second, func() bool { return !f.held("k") }, "the release tried again")

	// A nil hook means: ignore.
	err = lock.Do(context.Background(), f, "k2", func(context.Context, lock.Lease) error { return nil },
		lock.WithReleaseErrorHandler(nil))
	if err != nil {
		t.Errorf("Do with WithReleaseErrorHandler(nil) = %v, want nil", err)
	}
	waitFor(t, 5*time.Second, func() bool { return !f.held("k2") }, "the release tried again")
}

func TestDoLeaseLost(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		desc  string
		fnErr error
		want  error
	}{
		{"fn returns nil", nil, lock.ErrLeaseLost},
		{"fn's error kept", errBoom, errBoom},
		{"and the loss reported too", errBoom, lock.ErrLeaseLost},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			reported := 0
			var cause error
			err := lock.Do(context.Background(), f, "k", func(ctx context.Context, l lock.Lease) error {
				f.steal(l.Key)
				select {
				case <-ctx.Done():
					cause = context.Cause(ctx)
				case <-time.After(5 * time.Second):
					t.Errorf("fn's ctx not cancelled after the lease was lost")
				}
				return tt.fnErr
			}, lock.WithTTL(300*time.Millisecond), lock.WithReleaseErrorHandler(func(lock.Lease, error) { reported++ }))
			if !errors.Is(err, tt.want) {
				t.Errorf("Do = %v, want %v", err, tt.want)
			}
			if !errors.Is(cause, lock.ErrLeaseLost) {
				t.Errorf("context.Cause(fn's ctx) = %v, want ErrLeaseLost", cause)
			}
			// Releasing a lost lease finds nothing; that is expected, not reported.
			if reported != 0 {
				t.Errorf("release errors reported = %d, want 0", reported)
			}
		})
	}
}

func TestDoKeepsLeaseAlive(t *testing.T) {
	const ttl = 300 * time.Millisecond
	f := newFake()
	var mu sync.Mutex
	extended := 0
	start := time.Now()
	err := lock.Do(context.Background(), f, "k", func(ctx context.Context, l lock.Lease) error {
		waitFor(t, 10*time.Second, func() bool { return f.count("Extend") >= 3 }, "three extensions")
		if time.Since(start) < ttl {
			t.Errorf("three extensions within %v, want at least a TTL (one per ttl/3)", time.Since(start))
		}
		if !f.held(l.Key) || ctx.Err() != nil {
			t.Errorf("after a TTL: held = %v, ctx.Err() = %v; want true, nil", f.held(l.Key), ctx.Err())
		}
		return nil
	}, lock.WithTTL(ttl), lock.WithHeartbeat(lock.Heartbeat{OnExtend: func(time.Time) {
		mu.Lock()
		extended++
		mu.Unlock()
	}}))
	if err != nil {
		t.Errorf("Do = %v, want nil", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if extended < 3 {
		t.Errorf("Heartbeat.OnExtend calls = %d, want >= 3 (WithHeartbeat passed on)", extended)
	}
}

func TestDoContention(t *testing.T) {
	f := newFake()
	hold(t, f, "k")
	called := false
	err := lock.Do(context.Background(), f, "k", func(context.Context, lock.Lease) error {
		called = true
		return nil
	}, lock.WithWait(0))
	wantCode(t, err, lock.CodeAcquisitionTimeout)
	if !errors.Is(err, lock.ErrLocked) || called {
		t.Errorf("Do = %v, fn called = %v; want ErrLocked, false", err, called)
	}
}

func TestDoReleaseFunc(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		desc  string
		fn    func(context.Context, lock.Lease) error
		check func(error) bool
	}{
		{"success", func(context.Context, lock.Lease) error { return nil }, func(err error) bool { return err == nil }},
		{"failure", func(context.Context, lock.Lease) error { return errBoom }, func(err error) bool { return errors.Is(err, errBoom) }},
		{"panic", func(context.Context, lock.Lease) error { panic("boom") }, func(err error) bool { return errors.Is(err, lock.ErrFuncPanicked) }},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			ctx, cancel := context.WithCancel(context.Background())
			var outcome error
			calls := 0
			release := func(rctx context.Context, l lock.Lease, err error) error {
				calls++
				outcome = err
				if rctx.Err() != nil {
					t.Errorf("release context already done: %v", rctx.Err())
				}
				return f.Release(rctx, l.ID)
			}
			func() {
				defer func() { _ = recover() }()
				_ = lock.Do(ctx, f, "k", func(c context.Context, l lock.Lease) error {
					cancel() // the caller goes away; the release must not
					return tt.fn(c, l)
				}, lock.WithReleaseFunc(release))
			}()
			if calls != 1 {
				t.Fatalf("release func called %d times, want 1", calls)
			}
			if !tt.check(outcome) {
				t.Errorf("outcome passed to the release func = %v", outcome)
			}
			if got := f.count("Release"); got != 1 {
				t.Errorf("Backend.Release called %d times, want 1 (through the func only)", got)
			}
			if f.held("k") {
				t.Error("key still held")
			}
		})
	}
}

// TestDoLeaseExpiredUnnoticed: the whole process stalls past the TTL, so
// the heartbeat never runs; the release then finds the lease gone and Do
// must report the loss instead of nil.
func TestDoLeaseExpiredUnnoticed(t *testing.T) {
	f := newFake()
	reported := 0
	err := lock.Do(context.Background(), f, "k", func(ctx context.Context, l lock.Lease) error {
		f.steal(l.Key) // as if it expired while everything, heartbeat included, was paused
		return nil
	}, lock.WithTTL(time.Minute), lock.WithReleaseErrorHandler(func(lock.Lease, error) { reported++ }))
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Errorf("Do = %v, want ErrLeaseLost", err)
	}
	if reported != 0 {
		t.Errorf("a release of a lost lease was reported as a release error (%d)", reported)
	}
}

func TestValidateOptions(t *testing.T) {
	if err := lockdriver.ValidateOptions(); err != nil {
		t.Errorf("ValidateOptions() = %v, want nil", err)
	}
	if err := lockdriver.ValidateOptions(lock.WithWait(0), nil, lock.WithTTL(time.Second)); err != nil {
		t.Errorf("ValidateOptions(valid) = %v, want nil", err)
	}
	wantCode(t, lockdriver.ValidateOptions(lock.WithTTL(0)), lock.CodeInvalidArgument)
}

// TestDoWithLease: with WithLease, Do runs fn under the lease it is given
// and releases it through the release function, with no acquire call;
// Acquire refuses the option, and Do refuses a lease without an id.
func TestDoWithLease(t *testing.T) {
	s := &stub{}
	ctx := context.Background()
	l := lock.Lease{Key: "k", ID: "AAAAAAAAAAAAAAAAAAAAAA", Fence: "000000000000007", TTL: time.Minute, ExpiresAt: time.Now().Add(time.Minute)}
	var released []lock.Lease
	var got lock.Lease
	err := lock.Do(ctx, s, "k", func(held context.Context, hl lock.Lease) error {
		got = hl
		if fl, ok := lock.LeaseFrom(held); !ok || fl != l {
			t.Errorf("LeaseFrom(held) = %+v, %v; want the given lease", fl, ok)
		}
		return nil
	}, lock.WithLease(l), lock.WithReleaseFunc(func(_ context.Context, rl lock.Lease, outcome error) error {
		if outcome != nil {
			t.Errorf("release outcome = %v, want nil", outcome)
		}
		released = append(released, rl)
		return nil
	}))
	if err != nil || got != l || len(released) != 1 || released[0] != l {
		t.Fatalf("Do = %v, fn got %+v, released %+v; want nil, the given lease, released once", err, got, released)
	}
	for _, c := range s.calls {
		if c.Method == "Acquire" || c.Method == "AcquireID" {
			t.Errorf("Do with WithLease called %s", c.Method)
		}
	}
	if _, err := lock.Acquire(ctx, s, "k", lock.WithLease(l)); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("Acquire with WithLease = %v, want InvalidArgument", err)
	}
	ran := false
	err = lock.Do(ctx, s, "k", func(context.Context, lock.Lease) error { ran = true; return nil }, lock.WithLease(lock.Lease{}))
	if lock.CodeOf(err) != lock.CodeInvalidArgument || ran {
		t.Errorf("Do with WithLease of a zero lease = %v, ran %v; want InvalidArgument, not run", err, ran)
	}
}
