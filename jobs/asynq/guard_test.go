package asynqlock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// These tests call the wrapped handler directly, as asynq would, on real
// Redis.

func bg(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// spy is a backend that counts Release and ReleaseDone calls and can fail
// them. It is a lock.Recorder, not a lock.IDBackend.
type spy struct {
	lock.Recorder

	mu          sync.Mutex
	releases    int
	releaseDone int
	fail        error
}

func (s *spy) Release(ctx context.Context, id string) error {
	s.mu.Lock()
	s.releases++
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return fail
	}
	return s.Recorder.Release(ctx, id)
}

func (s *spy) ReleaseDone(ctx context.Context, l lock.Lease, ttl time.Duration) error {
	s.mu.Lock()
	s.releaseDone++
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return fail
	}
	return s.Recorder.ReleaseDone(ctx, l, ttl)
}

func (s *spy) counts() (releases, releaseDone int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.releases, s.releaseDone
}

// hidden decorates a backend without forwarding lock.Recorder.
type hidden struct{ lock.Backend }

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		desc string
		b    lock.Backend
		opts []asynqlock.Option
	}{
		{"nil backend", nil, nil},
		{"zero TTL", e.backend, []asynqlock.Option{asynqlock.WithTTL(0)}},
		{"zero TTL through lock options", e.backend, []asynqlock.Option{asynqlock.WithLockOptions(lock.WithTTL(0))}},
		{"TTL below the minimum", e.backend, []asynqlock.Option{asynqlock.WithTTL(time.Millisecond)}},
		{"unknown policy", e.backend, []asynqlock.Option{asynqlock.WithPolicy(asynqlock.Policy(7))}},
		{"negative done TTL", e.backend, []asynqlock.Option{asynqlock.WithDoneTTL(-time.Second)}},
		{"sub-millisecond done TTL", e.backend, []asynqlock.Option{asynqlock.WithDoneTTL(time.Microsecond)}},
		{"done TTL on a backend without lock.Recorder", hidden{e.backend}, []asynqlock.Option{asynqlock.WithDoneTTL(time.Minute)}},
		{"prefix not UTF-8", e.backend, []asynqlock.Option{asynqlock.WithPrefix("jobs\xff:")}},
		{"prefix too long", e.backend, []asynqlock.Option{asynqlock.WithPrefix(strings.Repeat("p", asynqlock.MaxPrefixBytes+1))}},
		{"limit 0", e.backend, []asynqlock.Option{asynqlock.WithLimit(0)}},
		{"limit above lockdriver.MaxLimit", e.backend, []asynqlock.Option{asynqlock.WithLimit(lockdriver.MaxLimit + 1)}},
		{"limit with a done TTL", e.backend, []asynqlock.Option{asynqlock.WithLimit(2), asynqlock.WithDoneTTL(time.Minute)}},
		{"limit on a backend without lock.IDBackend", hidden{e.backend}, []asynqlock.Option{asynqlock.WithLimit(2)}},
		{"negative limit wait", e.backend, []asynqlock.Option{asynqlock.WithLimit(2), asynqlock.WithLimitWait(-time.Second)}},
		{"limit wait without a limit", e.backend, []asynqlock.Option{asynqlock.WithLimitWait(time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			g, err := asynqlock.New(tt.b, tt.opts...)
			if g != nil || lock.CodeOf(err) != lock.CodeInvalidArgument {
				t.Errorf("New = %v, %v; want nil and an InvalidArgument error", g, err)
			}
		})
	}
	if _, err := asynqlock.New(hidden{e.backend}, asynqlock.WithLimit(2)); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("New(WithLimit) on a backend without limits = %v, want an error matching errors.ErrUnsupported", err)
	}
	// The same options are fine where they make sense.
	if _, err := asynqlock.New(hidden{e.backend}, asynqlock.WithTTL(asynqlock.MinTTL), nil,
		asynqlock.WithPrefix(strings.Repeat("p", asynqlock.MaxPrefixBytes))); err != nil {
		t.Errorf("New with a backend without lock.Recorder and no done TTL: %v", err)
	}
}

func TestInvalidKeyNeverReachesRedis(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	errKey := errors.New("no tenant in payload")
	tests := []struct {
		desc string
		opts []asynqlock.Option
	}{
		{"key func error", []asynqlock.Option{asynqlock.WithKeyFunc(func(context.Context, *asynq.Task) (string, error) { return "", errKey })}},
		{"empty key", []asynqlock.Option{asynqlock.WithKeyFunc(func(context.Context, *asynq.Task) (string, error) { return "", nil })}},
		{"too long with the prefix", []asynqlock.Option{asynqlock.WithKeyFunc(func(context.Context, *asynq.Task) (string, error) {
			return strings.Repeat("k", lockdriver.MaxKeyBytes-len(asynqlock.DefaultPrefix)+1), nil
		})}},
		{"not UTF-8", []asynqlock.Option{asynqlock.WithKeyFunc(func(context.Context, *asynq.Task) (string, error) { return "k\xff", nil })}},
		{"reserved by the backend", []asynqlock.Option{asynqlock.WithPrefix(""),
			asynqlock.WithKeyFunc(func(context.Context, *asynq.Task) (string, error) { return "done:x", nil })}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			before := e.cmds.Commands.Load()
			ran := false
			h := e.guard(t, tt.opts...).Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
				ran = true
				return nil
			}))
			err := h.ProcessTask(bg(t), asynq.NewTask(taskType, []byte("x")))
			if !errors.Is(err, asynqlock.ErrInvalidKey) || !errors.Is(err, asynq.SkipRetry) {
				t.Errorf("error %v: want ErrInvalidKey and asynq.SkipRetry", err)
			}
			if asynqlock.IsDuplicate(err) || errors.Is(err, asynq.RevokeTask) {
				t.Errorf("error %v: matches a duplicate or RevokeTask", err)
			}
			if ran {
				t.Error("handler ran")
			}
			if got := e.cmds.Commands.Load() - before; got != 0 {
				t.Errorf("commands sent = %d, want 0", got)
			}
		})
	}
	t.Run("key func error kept", func(t *testing.T) {
		g := e.guard(t, asynqlock.WithKeyFunc(func(context.Context, *asynq.Task) (string, error) { return "", errKey }))
		err := g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })).
			ProcessTask(bg(t), asynq.NewTask(taskType, nil))
		if !errors.Is(err, errKey) {
			t.Errorf("error %v does not wrap the key function's error", err)
		}
	})
}

func TestHandlerRunsUnderLease(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := &spy{Recorder: e.backend}
	g, err := asynqlock.New(b)
	if err != nil {
		t.Fatal(err)
	}
	task := asynq.NewTask(taskType, []byte(`{"id":1}`))
	key, _ := asynqlock.DefaultKey(bg(t), task)
	key = asynqlock.DefaultPrefix + key
	errWork := errors.New("work failed")
	var seen lock.Lease
	h := g.Wrap(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		l, ok := lock.LeaseFrom(ctx)
		if !ok {
			return errors.New("no lease")
		}
		seen = l
		if locked, err := e.backend.IsLocked(ctx, key); !locked || err != nil {
			return errors.New("key not locked while the handler runs")
		}
		return errWork
	}))
	if err := h.ProcessTask(bg(t), task); err != errWork {
		t.Fatalf("ProcessTask = %v, want the handler's error unchanged", err)
	}
	if seen.Key != key || seen.Fence == "" || seen.TTL != asynqlock.DefaultTTL {
		t.Errorf("lease = {Key %q Fence %q TTL %v}, want key %q, a fence, TTL %v", seen.Key, seen.Fence, seen.TTL, key, asynqlock.DefaultTTL)
	}
	if locked, err := e.backend.IsLocked(bg(t), key); locked || err != nil {
		t.Errorf("IsLocked after return = %v, %v; want released", locked, err)
	}
	if r, rd := b.counts(); r != 1 || rd != 0 {
		t.Errorf("Release %d, ReleaseDone %d; want 1, 0 (no done TTL)", r, rd)
	}
	if _, ok := lock.LeaseFrom(context.Background()); ok {
		t.Error("LeaseFrom(Background) = ok")
	}
}

func TestPanicReleases(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := &spy{Recorder: e.backend}
	g, err := asynqlock.New(b, asynqlock.WithDoneTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var key string
	h := g.Wrap(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		l, _ := lock.LeaseFrom(ctx)
		key = l.Key
		panic("boom")
	}))
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the handler's panic", r)
			}
		}()
		_ = h.ProcessTask(bg(t), asynq.NewTask(taskType, nil))
	}()
	if locked, err := e.backend.IsLocked(bg(t), key); locked || err != nil {
		t.Errorf("IsLocked after the panic = %v, %v; want released", locked, err)
	}
	if r, rd := b.counts(); r != 1 || rd != 0 {
		t.Errorf("Release %d, ReleaseDone %d; want 1, 0 (a panic leaves no done marker)", r, rd)
	}
}

func TestBusyKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		desc    string
		policy  asynqlock.Policy
		dropped bool
	}{
		{"requeue", asynqlock.Requeue, false},
		{"drop", asynqlock.Drop, true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			g := e.guard(t, asynqlock.WithPolicy(tt.policy), asynqlock.WithDoneTTL(time.Minute))
			task := asynq.NewTask(taskType, []byte(tt.desc))
			key, _ := asynqlock.DefaultKey(bg(t), task)
			holder, err := e.backend.Acquire(bg(t), asynqlock.DefaultPrefix+key, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = e.backend.Release(context.Background(), holder.ID) })
			ran := false
			err = g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
				ran = true
				return nil
			})).ProcessTask(bg(t), task)
			var d *asynqlock.DuplicateError
			if !errors.As(err, &d) {
				t.Fatalf("error %v: want a *DuplicateError", err)
			}
			if d.Done || d.Dropped != tt.dropped || !d.ExpiresAt.Equal(holder.ExpiresAt) {
				t.Errorf("DuplicateError = %+v, want Done false, Dropped %v, ExpiresAt %v", d, tt.dropped, holder.ExpiresAt)
			}
			if !errors.Is(err, lock.ErrLocked) || errors.Is(err, asynq.RevokeTask) != tt.dropped || errors.Is(err, asynq.SkipRetry) {
				t.Errorf("error %v: want ErrLocked, RevokeTask %v, no SkipRetry", err, tt.dropped)
			}
			if asynqlock.IsFailure(err) {
				t.Errorf("IsFailure(%v) = true", err)
			}
			if ran {
				t.Error("handler ran")
			}
		})
	}
}

// TestLockOptions: WithLockOptions reaches lock.Do (lock.WithWait turns the
// single attempt into a wait), but the release stays the Guard's, so the
// done marker is still written.
func TestLockOptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	replaced := false
	g := e.guard(t, asynqlock.WithDoneTTL(time.Minute), asynqlock.WithLockOptions(
		lock.WithWait(10*time.Second), lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Millisecond}),
		lock.WithReleaseFunc(func(ctx context.Context, l lock.Lease, _ error) error {
			replaced = true
			return e.backend.Release(ctx, l.ID)
		})))
	task := asynq.NewTask(taskType, []byte("wait"))
	key, _ := asynqlock.DefaultKey(bg(t), task)
	key = asynqlock.DefaultPrefix + key
	holder, err := e.backend.Acquire(bg(t), key, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(100*time.Millisecond, func() { _ = e.backend.Release(context.Background(), holder.ID) })
	ran := false
	err = g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		ran = true
		return nil
	})).ProcessTask(bg(t), task)
	if err != nil || !ran {
		t.Fatalf("ProcessTask = %v, ran = %v; want nil, true (waited for the holder's release)", err, ran)
	}
	if done, err := e.backend.IsDone(bg(t), key); !done || err != nil || replaced {
		t.Errorf("IsDone = %v, %v, release func replaced = %v; want true, nil, false", done, err, replaced)
	}
}

func TestDoneMarker(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := &spy{Recorder: e.backend}
	const doneTTL = 300 * time.Millisecond
	g, err := asynqlock.New(b, asynqlock.WithDoneTTL(doneTTL))
	if err != nil {
		t.Fatal(err)
	}
	var result error
	runs := 0
	h := g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		runs++
		return result
	}))
	task := asynq.NewTask(taskType, []byte("once"))
	key, _ := asynqlock.DefaultKey(bg(t), task)
	key = asynqlock.DefaultPrefix + key

	// A failed run leaves no marker: the next delivery runs.
	result = errors.New("transient")
	if err := h.ProcessTask(bg(t), task); err != result {
		t.Fatalf("failed run: %v", err)
	}
	result = nil
	if err := h.ProcessTask(bg(t), task); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if runs != 2 {
		t.Fatalf("runs = %d, want 2 (a failed run must not mark the key done)", runs)
	}
	if r, rd := b.counts(); r != 1 || rd != 1 {
		t.Errorf("Release %d, ReleaseDone %d; want 1 (failed run), 1 (successful run)", r, rd)
	}
	// Within the done TTL a delivery is dropped without running.
	err = h.ProcessTask(bg(t), task)
	var d *asynqlock.DuplicateError
	if !errors.As(err, &d) || !d.Done || !d.Dropped || !errors.Is(err, asynq.RevokeTask) || errors.Is(err, lock.ErrLocked) {
		t.Errorf("delivery after success: %v, want a done *DuplicateError matching asynq.RevokeTask", err)
	}
	if runs != 2 {
		t.Errorf("runs = %d, want 2", runs)
	}
	// Another payload is another key.
	if err := h.ProcessTask(bg(t), asynq.NewTask(taskType, []byte("other"))); err != nil || runs != 3 {
		t.Errorf("other payload: %v, runs %d; want nil, 3", err, runs)
	}
	// After the done TTL the key runs again.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		done, err := e.backend.IsDone(bg(t), key)
		if err != nil {
			t.Fatal(err)
		}
		if !done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("done marker still there after 5s (done TTL %v)", doneTTL)
		}
	}
	if err := h.ProcessTask(bg(t), task); err != nil || runs != 4 {
		t.Errorf("after the done TTL: %v, runs %d; want nil, 4", err, runs)
	}
}

func TestLeaseLostAfterNilResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const ttl = 90 * time.Millisecond
	b := &spy{Recorder: e.backend}
	g, err := asynqlock.New(b, asynqlock.WithTTL(ttl), asynqlock.WithDoneTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var cause error
	err = g.Wrap(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		l, _ := lock.LeaseFrom(ctx)
		if err := e.lockRC.Del(ctx, e.storageKey(t, l)).Err(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			cause = context.Cause(ctx)
		case <-time.After(5 * time.Second):
		}
		return nil // as if the work finished regardless
	})).ProcessTask(bg(t), asynq.NewTask(taskType, []byte("lost")))
	if !errors.Is(cause, lock.ErrLeaseLost) {
		t.Errorf("context.Cause = %v, want lock.ErrLeaseLost", cause)
	}
	if !errors.Is(err, lock.ErrLeaseLost) || !asynqlock.IsFailure(err) || errors.Is(err, asynq.SkipRetry) {
		t.Errorf("ProcessTask = %v, want a retryable failure matching lock.ErrLeaseLost", err)
	}
	if _, rd := b.counts(); rd != 0 {
		t.Errorf("ReleaseDone called %d times after a lost lease, want 0", rd)
	}
}

func TestReleaseErrorReported(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	errDown := errors.New("release refused")
	b := &spy{Recorder: e.backend, fail: errDown}
	var reported []error
	g, err := asynqlock.New(b, asynqlock.WithDoneTTL(time.Minute),
		asynqlock.WithReleaseErrorHandler(func(l lock.Lease, err error) {
			if l.ID == "" {
				err = errors.New("no lease given")
			}
			reported = append(reported, err)
		}))
	if err != nil {
		t.Fatal(err)
	}
	err = g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil })).
		ProcessTask(bg(t), asynq.NewTask(taskType, []byte("rel")))
	if err != nil {
		t.Errorf("ProcessTask = %v, want nil (the work succeeded; a failed release is reported, not returned)", err)
	}
	if len(reported) != 1 || reported[0] != errDown {
		t.Errorf("reported = %v, want [%v]", reported, errDown)
	}
}

func TestWrapNilPanics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	defer func() {
		if recover() == nil {
			t.Error("Wrap(nil) did not panic")
		}
	}()
	e.guard(t).Wrap(nil)
}

// TestRoundTrips counts the round trips to Redis of a task (a pipeline
// counts as one): a first delivery, a second delivery of the same task,
// and a delivery while another holds its key. With a done window the
// acquisition and the done check are one script: a run is 2 (acquire or
// answer done, release with the marker), a done task 1, a busy key 1.
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	tests := []struct {
		desc               string
		opts               []asynqlock.Option
		first, again, busy int64
	}{
		{"lock only: acquire, release", nil, 2, 2, 1},
		{"done window: acquire or done, release with the marker", []asynqlock.Option{asynqlock.WithDoneTTL(time.Minute)}, 2, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			e := newEnv(t)
			h := e.guard(t, tt.opts...).Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil }))
			count := func(what string, task *asynq.Task, want int64) {
				t.Helper()
				before := e.cmds.RoundTrips.Load()
				_ = h.ProcessTask(bg(t), task)
				if got := e.cmds.RoundTrips.Load() - before; got != want {
					t.Errorf("%s: %d round trips, want %d", what, got, want)
				}
			}
			// The first run may load the scripts (NOSCRIPT, then EVAL).
			if err := h.ProcessTask(bg(t), asynq.NewTask(taskType, []byte("warm-up"))); err != nil {
				t.Fatal(err)
			}
			task := asynq.NewTask(taskType, []byte("counted"))
			count("first delivery", task, tt.first)
			count("second delivery", task, tt.again)
			busy := asynq.NewTask(taskType, []byte("busy"))
			key, _ := asynqlock.DefaultKey(bg(t), busy)
			l, err := e.backend.Acquire(bg(t), asynqlock.DefaultPrefix+key, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			count("delivery on a busy key", busy, tt.busy)
			if err := e.backend.Release(bg(t), l.ID); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("limit: take a slot, free it", func(t *testing.T) {
		e := newEnv(t)
		h := e.guard(t, asynqlock.WithLimit(2)).Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { return nil }))
		for i, task := range []*asynq.Task{asynq.NewTask("warm-up", nil), asynq.NewTask(taskType, nil), asynq.NewTask(taskType, nil)} {
			before := e.cmds.RoundTrips.Load()
			if err := h.ProcessTask(bg(t), task); err != nil {
				t.Fatal(err)
			}
			if got := e.cmds.RoundTrips.Load() - before; i > 0 && got != 2 {
				t.Errorf("delivery %d: %d round trips, want 2", i, got)
			}
		}
	})
}

// TestOwnOptionsWin: the Guard's own settings win over the same ones given
// through WithLockOptions: WithTTL over lock.WithTTL, and with a limit
// WithLimitWait over lock.WithWait.
func TestOwnOptionsWin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := e.guard(t, asynqlock.WithTTL(20*time.Second), asynqlock.WithLockOptions(lock.WithTTL(2*time.Second)))
	var ttl time.Duration
	err := g.Wrap(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
		l, _ := lock.LeaseFrom(ctx)
		ttl = l.TTL
		return nil
	})).ProcessTask(bg(t), asynq.NewTask(taskType, []byte("ttl")))
	if err != nil || ttl != 20*time.Second {
		t.Errorf("ProcessTask = %v, lease TTL %v; want nil, 20s (WithTTL's, not lock.WithTTL's)", err, ttl)
	}

	const typ = "report:own-wait"
	limit := e.guard(t, asynqlock.WithLimit(1), asynqlock.WithLimitWait(50*time.Millisecond),
		asynqlock.WithLockOptions(lock.WithWait(10*time.Second)))
	e.holdSlots(t, asynqlock.DefaultLimitPrefix+typ, 1)
	start := time.Now()
	ran, err := runOnce(t, limit, asynq.NewTask(typ, []byte("any")))
	if waited := time.Since(start); ran || !asynqlock.IsLimited(err) || waited > 5*time.Second {
		t.Errorf("over the limit: ran %v, %v after %v; want a *LimitError after WithLimitWait's 50ms, not lock.WithWait's 10s", ran, err, waited)
	}
}

// oneStepless is a lock.Recorder whose AcquireDone is unsupported.
type oneStepless struct{ lock.Recorder }

func (oneStepless) AcquireDone(context.Context, string, time.Duration) (lock.Lease, bool, error) {
	return lock.Lease{}, false, errors.ErrUnsupported
}

// TestDoneWindowWithoutAcquireDone: on a Recorder whose AcquireDone is
// unsupported, the Guard acquires, then checks the marker while holding
// (3 round trips): a task already done is still dropped without running.
func TestDoneWindowWithoutAcquireDone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g, err := asynqlock.New(oneStepless{e.backend}, asynqlock.WithDoneTTL(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	h := g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error { runs++; return nil }))
	// A run and a done delivery load the scripts (a script's first call
	// may be answered NOSCRIPT and sent again).
	warm := asynq.NewTask(taskType, []byte("warm-up"))
	if err := h.ProcessTask(bg(t), warm); err != nil {
		t.Fatal(err)
	}
	_ = h.ProcessTask(bg(t), warm)
	task := asynq.NewTask(taskType, []byte("once"))
	for i, want := range []int64{3, 3} {
		before := e.cmds.RoundTrips.Load()
		err := h.ProcessTask(bg(t), task)
		if got := e.cmds.RoundTrips.Load() - before; got != want {
			t.Errorf("delivery %d: %d round trips, want %d", i+1, got, want)
		}
		var d *asynqlock.DuplicateError
		if i == 1 && (!errors.As(err, &d) || !d.Done) {
			t.Errorf("second delivery: %v, want a done *DuplicateError", err)
		}
	}
	if runs != 2 { // the warm-up and the first delivery
		t.Errorf("runs = %d, want 2", runs)
	}
}
