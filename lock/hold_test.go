package lock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/syncguard-go/syncguard/lock"
)

// heartbeats are the two ways Keep runs, which Hold must both stop: a
// goroutine per lease (a Backend without extensions) and the shared
// scheduler (a lock.IDBackend); each also through lock.WithHooks, which
// keeps the backend's extensions and so its way.
var heartbeats = []struct {
	desc string
	new  func() (lock.Backend, *fakeBackend)
}{
	{"per lease", func() (lock.Backend, *fakeBackend) { f := newFake(); return f, f }},
	{"per lease, hooked", func() (lock.Backend, *fakeBackend) { f := newFake(); return lock.WithHooks(f, passHook()), f }},
	{"batched", func() (lock.Backend, *fakeBackend) { f := newIDFake(nil); return f, f.fakeBackend }},
	{"batched, hooked", func() (lock.Backend, *fakeBackend) { f := newBatchFake(); return f.b, f.fakeBackend }},
}

// mustHold calls lock.Hold and fails the test on error.
func mustHold(t *testing.T, ctx context.Context, b lock.Backend, key string, opts ...lock.Option) (context.Context, lock.Lease, func() error) {
	t.Helper()
	held, l, release, err := lock.Hold(ctx, b, key, opts...)
	if err != nil {
		t.Fatalf("Hold(%q): %v", key, err)
	}
	return held, l, release
}

func TestHoldReleaseIdempotent(t *testing.T) {
	for _, hb := range heartbeats {
		t.Run(hb.desc, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			b, f := hb.new()
			_, _, release := mustHold(t, context.Background(), b, "k")
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() { errs[i] = release() })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("release call %d = %v, want nil", i, err)
				}
			}
			if err := release(); err != nil {
				t.Errorf("release after release = %v, want nil", err)
			}
			if got := f.count("Release"); got != 1 {
				t.Errorf("Backend.Release calls = %d, want 1", got)
			}
			if f.held("k") {
				t.Error("k still held after release")
			}
		})
	}
}

// TestHoldReleaseCancelsHeld: release cancels held (cause ErrLeaseLost: the
// lease is no longer held) and frees the key on a context of its own, live
// although the caller's is cancelled and bounded by the release timeout.
func TestHoldReleaseCancelsHeld(t *testing.T) {
	for _, hb := range heartbeats {
		t.Run(hb.desc, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			b, f := hb.new()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var releaseErr error = errors.New("Release not called")
			var releaseDeadline bool
			f.setHook(func(ctx context.Context, method string) error {
				if method == "Release" {
					releaseErr = ctx.Err()
					_, releaseDeadline = ctx.Deadline()
				}
				return nil
			})
			held, l, release := mustHold(t, ctx, b, "k")
			if got, ok := lock.LeaseFrom(held); !ok || got != l {
				t.Errorf("LeaseFrom(held) = %+v, %v; want %+v, true", got, ok, l)
			}
			if held.Err() != nil {
				t.Fatalf("held done before release: %v", context.Cause(held))
			}
			cancel() // the caller goes away; the release must still happen
			if err := release(); err != nil {
				t.Errorf("release = %v, want nil", err)
			}
			if held.Err() == nil {
				t.Fatal("held not cancelled by release")
			}
			if releaseErr != nil || !releaseDeadline {
				t.Errorf("Release ctx: Err() = %v, has deadline = %v; want nil, true", releaseErr, releaseDeadline)
			}
			if f.held("k") {
				t.Error("k still held after release")
			}

			// Released without a cancelled caller: the cause says why held ended.
			held, _, release = mustHold(t, context.Background(), b, "k")
			if err := release(); err != nil {
				t.Errorf("release = %v, want nil", err)
			}
			if cause := context.Cause(held); held.Err() == nil || !errors.Is(cause, lock.ErrLeaseLost) {
				t.Errorf("held after release: Err() = %v, cause %v; want done with a cause matching ErrLeaseLost", held.Err(), cause)
			}
		})
	}
}

// TestHoldLeaseLost: the lease is deleted behind the holder's back; held is
// cancelled with cause ErrLeaseLost before any release, and release reports
// the loss without calling it a release failure.
func TestHoldLeaseLost(t *testing.T) {
	for _, hb := range heartbeats {
		t.Run(hb.desc, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			b, f := hb.new()
			reported := 0
			held, l, release := mustHold(t, context.Background(), b, "k",
				lock.WithTTL(150*time.Millisecond), lock.WithReleaseErrorHandler(func(lock.Lease, error) { reported++ }))
			f.steal(l.Key)
			waitDone(t, held, 5*time.Second, "held after the lease was stolen")
			if cause := context.Cause(held); !errors.Is(cause, lock.ErrLeaseLost) {
				t.Errorf("context.Cause(held) = %v, want ErrLeaseLost", cause)
			}
			if err := release(); !errors.Is(err, lock.ErrLeaseLost) {
				t.Errorf("release = %v, want ErrLeaseLost", err)
			}
			if err := release(); !errors.Is(err, lock.ErrLeaseLost) {
				t.Errorf("second release = %v, want the same ErrLeaseLost", err)
			}
			if reported != 0 {
				t.Errorf("release errors reported = %d, want 0 (a lost lease is not a release failure)", reported)
			}
		})
	}
}

// TestHoldLostFoundAtRelease: the process stalls past the TTL, so the
// heartbeat notices nothing; the release finds the lease gone and says so.
func TestHoldLostFoundAtRelease(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFake()
	held, l, release := mustHold(t, context.Background(), f, "k", lock.WithTTL(time.Hour))
	f.steal(l.Key)
	if err := release(); !errors.Is(err, lock.ErrLeaseLost) {
		t.Errorf("release = %v, want ErrLeaseLost", err)
	}
	if held.Err() == nil {
		t.Error("held not cancelled by release")
	}
}

// TestHoldForgottenRelease: release is never called, and the caller's
// context ends. The heartbeat must stop with it (held is cancelled, no
// more Extend calls, no goroutine left), so the TTL frees the key.
func TestHoldForgottenRelease(t *testing.T) {
	for _, hb := range heartbeats {
		t.Run(hb.desc, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			b, f := hb.new()
			const ttl = 150 * time.Millisecond
			ctx, cancel := context.WithCancel(context.Background())
			held, l, _ := mustHold(t, ctx, b, "k", lock.WithTTL(ttl))
			waitFor(t, 5*time.Second, func() bool { return f.count("Extend") >= 2 }, "two heartbeats")
			cancel()
			waitDone(t, held, time.Second, "held after the caller's context ended")
			noMoreExtends(t, f, ttl)
			waitFor(t, time.Second, func() bool { return !f.held(l.Key) }, "the TTL to free the key")
			if got := f.count("Release"); got != 0 {
				t.Errorf("Release calls = %d, want 0 (release was never called)", got)
			}
		})
	}
}

func TestHoldErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newFake()
	hold(t, f, "busy")
	tests := []struct {
		desc  string
		key   string
		opts  []lock.Option
		check func(error) bool
	}{
		{"busy key", "busy", []lock.Option{lock.WithWait(0)}, func(err error) bool { return errors.Is(err, lock.ErrLocked) }},
		{"invalid key", "", nil, func(err error) bool { return lock.CodeOf(err) == lock.CodeInvalidArgument }},
		{"bad option", "k", []lock.Option{lock.WithTTL(0)}, func(err error) bool { return lock.CodeOf(err) == lock.CodeInvalidArgument }},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			held, l, release, err := lock.Hold(context.Background(), f, tt.key, tt.opts...)
			if !tt.check(err) {
				t.Errorf("Hold error = %v", err)
			}
			if held != nil || release != nil || l != (lock.Lease{}) {
				t.Errorf("Hold = %v, %+v, release nil = %v; want nil, zero, true", held, l, release == nil)
			}
		})
	}
	if f.held("k") {
		t.Error("k held after failed Holds")
	}
	if _, _, release, err := lock.Hold(context.Background(), nil, "k"); lock.CodeOf(err) != lock.CodeInvalidArgument || release != nil {
		t.Errorf("Hold on a nil backend = release nil %v, %v; want true, InvalidArgument", release == nil, err)
	}
}

// TestHoldReleaseError: a failed release goes to the handler, not to
// release's result (the lease was not lost), and a transient failure is
// tried again in the background until the release is answered.
func TestHoldReleaseError(t *testing.T) {
	defer goleak.VerifyNone(t)
	down := &lock.Error{Code: lock.CodeServiceUnavailable, Op: "release"}
	f := newFake()
	var failed sync.Once
	f.setHook(func(_ context.Context, method string) error {
		err := error(nil)
		if method == "Release" {
			failed.Do(func() { err = down }) // the first release only
		}
		return err
	})
	var reported []error
	_, _, release := mustHold(t, context.Background(), f, "k",
		lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) { reported = append(reported, err) }))
	if err := release(); err != nil {
		t.Errorf("release = %v, want nil", err)
	}
	if len(reported) != 1 || !errors.Is(reported[0], down) {
		t.Errorf("reported release errors = %v, want [%v]", reported, down)
	}
	waitFor(t, 5*time.Second, func() bool { return !f.held("k") }, "the release tried again")
}

// ctxKey is the context key of TestHoldWithLeaseUnbatched's caller's value.
type ctxKey struct{}

// TestHoldWithLeaseUnbatched: Hold of a lease the caller holds (WithLease) with
// an Unbatched heartbeat, as lock/election holds a term, extends it with
// Extend under the caller's context, on a backend that would batch it: the
// hooks see the caller's values, and the release returns the loss.
func TestHoldWithLeaseUnbatched(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := newIDFake(nil)
	var mu sync.Mutex
	seen := map[lock.OpKind][]any{}
	b := lock.WithHooks(f, hookFunc(func(next lock.OpFunc) lock.OpFunc {
		return func(ctx context.Context, op *lock.Op) error {
			mu.Lock()
			seen[op.Kind] = append(seen[op.Kind], ctx.Value(ctxKey{}))
			mu.Unlock()
			return next(ctx, op)
		}
	}))
	ctx := context.WithValue(context.Background(), ctxKey{}, "caller")
	l, err := f.Acquire(ctx, "k", 150*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	held, got, release, err := lock.Hold(ctx, b, l.Key, lock.WithLease(l), lock.WithHeartbeat(lock.Heartbeat{Unbatched: true}))
	if err != nil {
		t.Fatalf("Hold = %v", err)
	}
	if got.ID != l.ID {
		t.Errorf("Hold's lease id %q, want the lease given, %q", got.ID, l.ID)
	}
	waitFor(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen[lock.OpExtend]) >= 2
	}, "two extensions")
	mu.Lock()
	for i, v := range seen[lock.OpExtend] {
		if v != "caller" {
			t.Errorf("extension %d ran under a context with value %v, want the caller's", i, v)
		}
	}
	if n := len(seen[lock.OpExtendBatch]); n != 0 {
		t.Errorf("%d batched extensions, want none", n)
	}
	mu.Unlock()
	f.steal(l.Key)
	waitDone(t, held, 5*time.Second, "held after the lease was stolen")
	if err := release(); !errors.Is(err, lock.ErrLeaseLost) {
		t.Errorf("release = %v, want ErrLeaseLost", err)
	}
}
