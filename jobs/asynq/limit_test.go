package asynqlock_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
)

// These tests call a limiting Guard's handler directly, as asynq would, on
// real Redis; TestLimitCapsRunningTasks runs a real asynq server.

// holdSlots takes n slots of key among n on e's backend, released in
// t.Cleanup, and returns the earliest expiry among them.
func (e *env) holdSlots(t *testing.T, key string, n int) time.Time {
	t.Helper()
	var earliest time.Time
	for i := range n {
		l, err := lock.Acquire(bg(t), e.backend, key, lock.WithLimit(n), lock.WithWait(0),
			lock.WithTTL(10*time.Second+time.Duration(i)*time.Second))
		if err != nil {
			t.Fatalf("slot %d of %d: %v", i+1, n, err)
		}
		t.Cleanup(func() { _ = e.backend.Release(context.Background(), l.ID) })
		if earliest.IsZero() || l.ExpiresAt.Before(earliest) {
			earliest = l.ExpiresAt
		}
	}
	return earliest
}

// runOnce runs task through g with a handler that only notes that it ran.
func runOnce(t *testing.T, g *asynqlock.Guard, task *asynq.Task) (ran bool, err error) {
	t.Helper()
	err = g.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		ran = true
		return nil
	})).ProcessTask(bg(t), task)
	return ran, err
}

func TestLimitReached(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, policy := range []asynqlock.Policy{asynqlock.Requeue, asynqlock.Drop} {
		t.Run(policy.String(), func(t *testing.T) {
			const n = 3
			typ := "report:" + policy.String()
			g := e.guard(t, asynqlock.WithLimit(n), asynqlock.WithPolicy(policy), asynqlock.WithLimitWait(0))
			earliest := e.holdSlots(t, asynqlock.DefaultLimitPrefix+typ, n)
			ran, err := runOnce(t, g, asynq.NewTask(typ, []byte("any payload")))
			if ran {
				t.Error("handler ran over the limit")
			}
			dropped := policy == asynqlock.Drop
			var le *asynqlock.LimitError
			if !errors.As(err, &le) {
				t.Fatalf("error %v: want a *LimitError", err)
			}
			if le.Limit != n || le.Dropped != dropped || !le.ExpiresAt.Equal(earliest) {
				t.Errorf("LimitError = %+v, want Limit %d, Dropped %v, ExpiresAt %v (the earliest holder's)", le, n, dropped, earliest)
			}
			if !errors.Is(err, lock.ErrLocked) || errors.Is(err, asynq.RevokeTask) != dropped || errors.Is(err, asynq.SkipRetry) {
				t.Errorf("error %v: want ErrLocked, RevokeTask %v, no SkipRetry", err, dropped)
			}
			if asynqlock.IsFailure(err) || asynqlock.IsDuplicate(err) || !asynqlock.IsLimited(err) {
				t.Errorf("IsFailure, IsDuplicate, IsLimited(%v) = %v, %v, %v; want false, false, true",
					err, asynqlock.IsFailure(err), asynqlock.IsDuplicate(err), asynqlock.IsLimited(err))
			}
		})
	}
}

// TestLimitKeys: the default key of a limit is the task type under
// DefaultLimitPrefix, whatever the payload; WithKeyFunc makes it per
// tenant; the handler runs under a slot, which it gives back.
func TestLimitKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tenant := asynqlock.WithKeyFunc(func(_ context.Context, t *asynq.Task) (string, error) {
		var p struct{ Tenant string }
		if err := json.Unmarshal(t.Payload(), &p); err != nil {
			return "", err
		}
		return "tenant:" + p.Tenant, nil
	})
	tests := []struct {
		desc    string
		opts    []asynqlock.Option
		payload string
		key     string
	}{
		{"task type", nil, `{"Tenant":"a"}`, asynqlock.DefaultLimitPrefix + taskType},
		{"per tenant", []asynqlock.Option{tenant}, `{"Tenant":"a"}`, asynqlock.DefaultLimitPrefix + "tenant:a"},
		{"own prefix", []asynqlock.Option{tenant, asynqlock.WithPrefix("jobs:")}, `{"Tenant":"b"}`, "jobs:tenant:b"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			g := e.guard(t, append([]asynqlock.Option{asynqlock.WithLimit(2)}, tt.opts...)...)
			var seen lock.Lease
			var holders int
			err := g.Wrap(asynq.HandlerFunc(func(ctx context.Context, _ *asynq.Task) error {
				seen, _ = lock.LeaseFrom(ctx)
				info, err := e.backend.LookupLimit(ctx, seen.Key)
				if err != nil || info == nil {
					return errors.Join(errors.New("no limit info while running"), err)
				}
				holders = len(info.Holders)
				return nil
			})).ProcessTask(bg(t), asynq.NewTask(taskType, []byte(tt.payload)))
			if err != nil {
				t.Fatal(err)
			}
			if seen.Key != tt.key || seen.Fence == "" || holders != 1 {
				t.Errorf("lease key %q, fence %q, holders %d; want %q, a fence, 1", seen.Key, seen.Fence, holders, tt.key)
			}
			if info, err := e.backend.LookupLimit(bg(t), tt.key); info != nil || err != nil {
				t.Errorf("LookupLimit after return = %+v, %v; want nil, nil (slot released)", info, err)
			}
		})
	}
	t.Run("hashed type", func(t *testing.T) {
		// A type that looks like a hashed one is hashed itself, so the two
		// never share a limit.
		plain, _ := asynqlock.TypeKey(bg(t), asynq.NewTask("x", nil))
		h, _ := asynqlock.TypeKey(bg(t), asynq.NewTask("h:x", nil))
		if plain != "x" || h == "h:x" || len(h) != len("h:")+64 {
			t.Errorf("TypeKey(x), TypeKey(h:x) = %q, %q; want x and a hashed key", plain, h)
		}
	})
}

// TestLimitKeyHeldAsLock: a key held as a plain lock is not taken as a
// limit (nor the reverse) and the task is archived, not retried forever.
func TestLimitKeyHeldAsLock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const typ = "mixed:kind"
	key := asynqlock.DefaultLimitPrefix + typ
	l, err := e.backend.Acquire(bg(t), key, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.backend.Release(context.Background(), l.ID) })
	ran, err := runOnce(t, e.guard(t, asynqlock.WithLimit(2)), asynq.NewTask(typ, nil))
	if ran {
		t.Error("handler ran")
	}
	if !errors.Is(err, lock.ErrKindMismatch) || !errors.Is(err, asynq.SkipRetry) || errors.Is(err, asynqlock.ErrInvalidKey) {
		t.Errorf("error %v: want lock.ErrKindMismatch and asynq.SkipRetry, not ErrInvalidKey", err)
	}
}

// TestDedupThenLimit: the documented way to deduplicate and limit, two
// Guards chained: a task over the limit passes the deduplicating Guard's
// lock unchanged (still a *LimitError, requeued), leaves no done marker,
// and runs once a slot frees; its repeat is then dropped as done.
func TestDedupThenLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dedup := e.guard(t, asynqlock.WithDoneTTL(time.Minute))
	limit := e.guard(t, asynqlock.WithLimit(1), asynqlock.WithLimitWait(0))
	runs := 0
	h := dedup.Wrap(limit.Wrap(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
		runs++
		return nil
	})))
	task := asynq.NewTask(taskType, []byte("chained"))
	blocker, err := lock.Acquire(bg(t), e.backend, asynqlock.DefaultLimitPrefix+taskType, lock.WithLimit(1), lock.WithWait(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ProcessTask(bg(t), task); !asynqlock.IsLimited(err) || asynqlock.IsFailure(err) || errors.Is(err, asynq.RevokeTask) {
		t.Fatalf("over the limit: %v; want a requeued *LimitError", err)
	}
	if err := e.backend.Release(bg(t), blocker.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.ProcessTask(bg(t), task); err != nil {
		t.Fatalf("with a free slot: %v", err)
	}
	if err := h.ProcessTask(bg(t), task); !asynqlock.IsDuplicate(err) || !errors.Is(err, asynq.RevokeTask) {
		t.Errorf("the repeat: %v; want a dropped done duplicate", err)
	}
	if runs != 1 {
		t.Errorf("handler runs = %d, want 1", runs)
	}
}
