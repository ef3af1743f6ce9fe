package lock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The release-retry tests are in package lock so that they can wait for
// the background retries (releaseRetries) before goleak looks.

// retryBackend is a Backend whose Release is scripted: fail, when set,
// gets the release's context and the call's number (from 1), and an error
// it returns is Release's answer; otherwise Release releases. Leases never
// expire.
type retryBackend struct {
	fail func(ctx context.Context, n int) error

	mu    sync.Mutex
	held  map[string]string // lock id -> key
	calls []time.Time       // when Release was called
}

var _ Backend = (*retryBackend)(nil)

func newRetryBackend(fail func(ctx context.Context, n int) error) *retryBackend {
	return &retryBackend{fail: fail, held: map[string]string{}}
}

func (b *retryBackend) Acquire(_ context.Context, key string, ttl time.Duration) (Lease, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range b.held {
		if k == key {
			return Lease{}, &LockedError{}
		}
	}
	id := fmt.Sprintf("id-%d", len(b.held)+1) // the fake checks no format
	b.held[id] = key
	return Lease{Key: key, ID: id, Fence: "000000000000001", TTL: ttl, ExpiresAt: time.Now().Add(ttl)}, nil
}

func (b *retryBackend) Release(ctx context.Context, id string) error {
	b.mu.Lock()
	b.calls = append(b.calls, time.Now())
	n := len(b.calls)
	b.mu.Unlock()
	if b.fail != nil {
		if err := b.fail(ctx, n); err != nil {
			return err
		}
	}
	return b.release(id)
}

// release deletes lease id, as a Release that Redis ran.
func (b *retryBackend) release(id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.held[id]; !ok {
		return notHeld{}
	}
	delete(b.held, id)
	return nil
}

func (b *retryBackend) Extend(_ context.Context, id string, ttl time.Duration) (time.Time, error) {
	if !b.isHeld(id) {
		return time.Time{}, notHeld{}
	}
	return time.Now().Add(ttl), nil
}

func (b *retryBackend) IsLocked(_ context.Context, key string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range b.held {
		if k == key {
			return true, nil
		}
	}
	return false, nil
}

func (b *retryBackend) LookupKey(context.Context, string) (*Info, error) { return nil, nil }
func (b *retryBackend) LookupID(context.Context, string) (*Info, error)  { return nil, nil }
func (b *retryBackend) Capabilities() Capabilities                       { return Capabilities{Backend: "retry-fake"} }

// isHeld reports whether lease id is held.
func (b *retryBackend) isHeld(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.held[id]
	return ok
}

// releaseCalls returns when each Release call came.
func (b *retryBackend) releaseCalls() []time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]time.Time(nil), b.calls...)
}

// waitRetries waits for every background release retry to end.
func waitRetries(t *testing.T, limit time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		releaseRetries.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("a background release retry still runs %v later", limit)
	}
}

// reports collects what the release error handler hears.
type reports struct {
	mu   sync.Mutex
	errs []error
}

func (r *reports) handler(_ Lease, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *reports) get() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs...)
}

// hangs answers a release only when its context ends, with what answer
// makes of the context's error: a store that never replies.
func hangs(answer func(error) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		<-ctx.Done()
		return answer(ctx.Err())
	}
}

func fails(err error) func(context.Context) error { return func(context.Context) error { return err } }

// TestReleaseRetryTransient: a release that fails twice on a transient
// error, the store restarting or silent, is tried again in the background
// until it succeeds; release returns at once, the handler hears the first
// failure only, and the retry goes on after the caller's context ends.
func TestReleaseRetryTransient(t *testing.T) {
	const releaseTimeout = 50 * time.Millisecond
	tests := []struct {
		desc string
		fail func(ctx context.Context) error
	}{
		{"service unavailable (LOADING, connection refused)", fails(&Error{Code: CodeServiceUnavailable, Op: "release", Msg: "LOADING Redis is loading the dataset in memory"})},
		{"network timeout", fails(&Error{Code: CodeNetworkTimeout, Op: "release"})},
		{"rate limited", fails(&Error{Code: CodeRateLimited, Op: "release"})},
		{"no reply within the release timeout (Aborted)", hangs(func(err error) error { return &Error{Code: CodeAborted, Op: "release", Err: err} })},
		{"no reply within the release timeout (the context's error)", hangs(func(err error) error { return err })},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			proceed := make(chan struct{})
			var first error
			b := newRetryBackend(func(ctx context.Context, n int) error {
				switch {
				case n == 1:
					first = tt.fail(ctx)
					return first
				case n == 2:
					return tt.fail(ctx)
				}
				<-proceed
				return nil
			})
			var rep reports
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, l, release, err := Hold(ctx, b, "k", WithTTL(time.Minute),
				WithReleaseTimeout(releaseTimeout), WithReleaseErrorHandler(rep.handler))
			if err != nil {
				t.Fatal(err)
			}
			if err := release(); err != nil {
				t.Errorf("release = %v, want nil (a failed release is not a loss)", err)
			}
			if !b.isHeld(l.ID) {
				t.Errorf("released before release returned, want release not to wait for the retry")
			}
			cancel() // the caller is gone; the retry is not the caller's
			close(proceed)
			waitRetries(t, 10*time.Second)
			if b.isHeld(l.ID) {
				t.Errorf("lease still held after the retry ended, want released")
			}
			if got := len(b.releaseCalls()); got != 3 {
				t.Errorf("Release calls = %d, want 3 (two failures, then the release)", got)
			}
			if got := rep.get(); len(got) != 1 || got[0] != first {
				t.Errorf("release error handler heard %v, want [%v] (the first failure, once)", got, first)
			}
		})
	}
}

// TestReleaseRetryDo: Do's release is retried the same way, and Do
// returns fn's result without waiting.
func TestReleaseRetryDo(t *testing.T) {
	defer goleak.VerifyNone(t)
	down := &Error{Code: CodeServiceUnavailable, Op: "release"}
	b := newRetryBackend(func(_ context.Context, n int) error {
		if n <= 2 {
			return down
		}
		return nil
	})
	var rep reports
	var id string
	err := Do(context.Background(), b, "k", func(_ context.Context, l Lease) error {
		id = l.ID
		return nil
	}, WithTTL(time.Minute), WithReleaseErrorHandler(rep.handler))
	if err != nil {
		t.Errorf("Do = %v, want nil", err)
	}
	waitRetries(t, 10*time.Second)
	if b.isHeld(id) || len(b.releaseCalls()) != 3 {
		t.Errorf("after the retry: held = %v, Release calls = %d; want false, 3", b.isHeld(id), len(b.releaseCalls()))
	}
	if got := rep.get(); len(got) != 1 || !errors.Is(got[0], down) {
		t.Errorf("release error handler heard %v, want [%v]", got, down)
	}
}

// TestReleaseRetryNotTransient: a release that failed for a reason a retry
// cannot change, or found the lease gone, is not tried again.
func TestReleaseRetryNotTransient(t *testing.T) {
	tests := []struct {
		desc     string
		fail     func(ctx context.Context) error
		reported bool // heard by the release error handler
	}{
		{"not held", fails(notHeld{}), false},
		{"invalid argument", fails(&Error{Code: CodeInvalidArgument, Op: "release", Msg: "WRONGTYPE"}), true},
		{"auth failed", fails(&Error{Code: CodeAuthFailed, Op: "release"}), true},
		{"internal", fails(&Error{Code: CodeInternal, Op: "release"}), true},
		{"a context that is not the release's ended (Aborted)", fails(&Error{Code: CodeAborted, Op: "release", Err: context.DeadlineExceeded}), true},
		{"a context that is not the release's ended (its error)", fails(context.DeadlineExceeded), true},
		{"a foreign error", fails(errors.New("boom")), true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			b := newRetryBackend(func(ctx context.Context, _ int) error { return tt.fail(ctx) })
			var rep reports
			// A TTL that ends a wrong retry soon, so that its calls show.
			_, _, release, err := Hold(context.Background(), b, "k", WithTTL(300*time.Millisecond), WithReleaseErrorHandler(rep.handler))
			if err != nil {
				t.Fatal(err)
			}
			_ = release()
			waitRetries(t, 10*time.Second)
			if got := len(b.releaseCalls()); got != 1 {
				t.Errorf("Release calls = %d, want 1 (not retried)", got)
			}
			want := 0
			if tt.reported {
				want = 1
			}
			if got := rep.get(); len(got) != want {
				t.Errorf("release error handler heard %v, want %d errors", got, want)
			}
		})
	}
}

// TestReleaseRetryEndsOnNotHeld: the first try ran but its reply was
// lost; the retry finds the lease gone and stops there.
func TestReleaseRetryEndsOnNotHeld(t *testing.T) {
	defer goleak.VerifyNone(t)
	var b *retryBackend
	var id string
	b = newRetryBackend(func(_ context.Context, n int) error {
		if n == 1 {
			_ = b.release(id) // Redis ran it; the reply never came
			return &Error{Code: CodeNetworkTimeout, Op: "release"}
		}
		return nil
	})
	var rep reports
	_, l, release, err := Hold(context.Background(), b, "k", WithTTL(300*time.Millisecond), WithReleaseErrorHandler(rep.handler))
	if err != nil {
		t.Fatal(err)
	}
	id = l.ID
	if err := release(); err != nil {
		t.Errorf("release = %v, want nil", err)
	}
	waitRetries(t, 10*time.Second)
	if got := len(b.releaseCalls()); got != 2 {
		t.Errorf("Release calls = %d, want 2 (the retry found the lease gone)", got)
	}
	if got := rep.get(); len(got) != 1 {
		t.Errorf("release error handler heard %v, want the first failure only", got)
	}
}

// TestReleaseRetryStopsAtTTL: a store that stays down is tried until the
// lease's TTL has passed since the release (the lease is gone by then),
// and the handler hears of it once.
func TestReleaseRetryStopsAtTTL(t *testing.T) {
	defer goleak.VerifyNone(t)
	const ttl = 400 * time.Millisecond
	down := &Error{Code: CodeServiceUnavailable, Op: "release"}
	b := newRetryBackend(func(context.Context, int) error { return down })
	var rep reports
	_, _, release, err := Hold(context.Background(), b, "k", WithTTL(ttl), WithReleaseErrorHandler(rep.handler))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = release()
	waitRetries(t, 10*time.Second)
	ended := time.Since(start)
	calls := b.releaseCalls()
	// Tries at about 0, 0, 50, 150 and 350 ms; the next would be at 750.
	if len(calls) < 4 {
		t.Errorf("Release calls = %d in the TTL (%v), want at least 4", len(calls), ttl)
	}
	// start is taken just before release, which stops the heartbeat
	// before it starts the clock: allow for that.
	if last := calls[len(calls)-1].Sub(start); last > ttl+10*time.Millisecond {
		t.Errorf("last Release call %v after the release, want none after the TTL %v", last, ttl)
	}
	if ended < ttl-50*time.Millisecond || ended > ttl+500*time.Millisecond {
		t.Errorf("the retry ended %v after the release, want at the TTL %v", ended, ttl)
	}
	if got := rep.get(); len(got) != 1 || !errors.Is(got[0], down) {
		t.Errorf("release error handler heard %v, want [%v] once", got, down)
	}
}

// TestReleaseRetryReleaseFunc: a WithReleaseFunc function is the one
// retried, with the same lease and outcome, each try on a fresh context
// bounded by the release timeout.
func TestReleaseRetryReleaseFunc(t *testing.T) {
	defer goleak.VerifyNone(t)
	const releaseTimeout = time.Second
	errBoom := errors.New("boom")
	b := newRetryBackend(nil)
	type call struct {
		ctx     context.Context
		left    time.Duration
		lease   Lease
		outcome error
	}
	var mu sync.Mutex
	var calls []call
	release := func(ctx context.Context, l Lease, outcome error) error {
		dl, _ := ctx.Deadline()
		mu.Lock()
		calls = append(calls, call{ctx, time.Until(dl), l, outcome})
		n := len(calls)
		mu.Unlock()
		if n <= 2 {
			return &Error{Code: CodeServiceUnavailable, Op: "release"}
		}
		return b.Release(ctx, l.ID)
	}
	var lease Lease
	err := Do(context.Background(), b, "k", func(_ context.Context, l Lease) error {
		lease = l
		return errBoom
	}, WithTTL(time.Minute), WithReleaseTimeout(releaseTimeout), WithReleaseFunc(release),
		WithReleaseErrorHandler(func(Lease, error) {}))
	if !errors.Is(err, errBoom) {
		t.Errorf("Do = %v, want fn's error", err)
	}
	waitRetries(t, 10*time.Second)
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 3 {
		t.Fatalf("release func calls = %d, want 3", len(calls))
	}
	for i, c := range calls {
		if c.lease != lease || !errors.Is(c.outcome, errBoom) {
			t.Errorf("call %d: lease %+v, outcome %v; want %+v, %v", i, c.lease, c.outcome, lease, errBoom)
		}
		if c.left <= 0 || c.left > releaseTimeout {
			t.Errorf("call %d: %v left on its context, want a deadline within the release timeout %v", i, c.left, releaseTimeout)
		}
		if i > 0 && c.ctx == calls[i-1].ctx {
			t.Errorf("call %d: the context of the try before, want one of its own", i)
		}
	}
	if b.isHeld(lease.ID) {
		t.Errorf("lease still held after the retry, want released through the func")
	}
}

// notHeld is a backend's not-held error, as lockdriver.NotHeldError is
// (which the tests of package lock cannot import).
type notHeld struct{}

func (notHeld) Error() string        { return ErrNotHeld.Error() }
func (notHeld) Is(target error) bool { return target == ErrNotHeld }
