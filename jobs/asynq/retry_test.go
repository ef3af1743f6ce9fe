package asynqlock_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
)

func TestRetryDelay(t *testing.T) {
	const fallbackDelay = 42 * time.Second
	fallback := func(int, error, *asynq.Task) time.Duration { return fallbackDelay }
	busy := func(in time.Duration) error {
		return fmt.Errorf("wrapped: %w", &asynqlock.DuplicateError{ExpiresAt: time.Now().Add(in)})
	}
	limited := func(in time.Duration) error {
		return fmt.Errorf("wrapped: %w", &asynqlock.LimitError{Limit: 2, ExpiresAt: time.Now().Add(in)})
	}
	tests := []struct {
		desc     string
		err      error
		min, max time.Duration
	}{
		{"busy, holder expires in 2s", busy(2 * time.Second), 1900 * time.Millisecond, 2200 * time.Millisecond},
		{"busy, holder about to expire", busy(10 * time.Millisecond), asynqlock.MinRetryDelay, asynqlock.MinRetryDelay * 11 / 10},
		{"busy, holder expiry past", busy(-time.Minute), asynqlock.MinRetryDelay, asynqlock.MinRetryDelay * 11 / 10},
		{"limited, earliest holder expires in 30s", limited(30 * time.Second), asynqlock.MinRetryDelay, asynqlock.MaxLimitRetryDelay},
		{"limited, earliest holder expires in 300ms", limited(300 * time.Millisecond), asynqlock.MinRetryDelay, 300 * time.Millisecond},
		{"limited, earliest expiry past", limited(-time.Minute), asynqlock.MinRetryDelay, asynqlock.MinRetryDelay},
		{"done duplicate", &asynqlock.DuplicateError{Done: true, Dropped: true}, fallbackDelay, fallbackDelay},
		{"other error", errors.New("boom"), fallbackDelay, fallbackDelay},
		{"lease lost", lock.ErrLeaseLost, fallbackDelay, fallbackDelay},
	}
	f := asynqlock.RetryDelay(fallback)
	task := asynq.NewTask(taskType, nil)
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			for range 20 { // the jitter is random
				if got := f(3, tt.err, task); got < tt.min || got > tt.max {
					t.Fatalf("RetryDelay(%v) = %v, want within [%v, %v]", tt.err, got, tt.min, tt.max)
				}
			}
		})
	}
	t.Run("limited tasks spread out", func(t *testing.T) {
		// Full jitter over [MinRetryDelay, MaxLimitRetryDelay]: 200 draws
		// land in both halves of the range (each half misses all 200 with
		// probability 2^-200).
		var low, high int
		mid := (asynqlock.MinRetryDelay + asynqlock.MaxLimitRetryDelay) / 2
		for range 200 {
			if f(0, limited(time.Minute), task) < mid {
				low++
			} else {
				high++
			}
		}
		if low == 0 || high == 0 {
			t.Errorf("delays below / above %v: %d / %d; want both", mid, low, high)
		}
	})
	t.Run("nil fallback is asynq's default", func(t *testing.T) {
		// asynq.DefaultRetryDelayFunc(0, ...) is 15s plus up to 29s.
		if got := asynqlock.RetryDelay(nil)(0, errors.New("boom"), task); got < 15*time.Second || got > 44*time.Second {
			t.Errorf("RetryDelay(nil) = %v, want asynq's default within [15s, 44s]", got)
		}
	})
}

func TestIsFailureAndIsDuplicate(t *testing.T) {
	busy := &asynqlock.DuplicateError{ExpiresAt: time.Now()}
	tests := []struct {
		desc               string
		err                error
		duplicate, limited bool
		failure            bool
	}{
		{"nil", nil, false, false, false},
		{"busy", busy, true, false, false},
		{"busy, wrapped", fmt.Errorf("mw: %w", busy), true, false, false},
		{"dropped", &asynqlock.DuplicateError{Dropped: true}, true, false, false},
		{"done", &asynqlock.DuplicateError{Done: true, Dropped: true}, true, false, false},
		{"over the limit, wrapped", fmt.Errorf("mw: %w", &asynqlock.LimitError{Limit: 2}), false, true, false},
		{"over the limit, dropped", &asynqlock.LimitError{Limit: 2, Dropped: true}, false, true, false},
		{"plain lock.ErrLocked", lock.ErrLocked, false, false, true},
		{"other", errors.New("boom"), false, false, true},
		{"revoke", asynq.RevokeTask, false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := asynqlock.IsDuplicate(tt.err); got != tt.duplicate {
				t.Errorf("IsDuplicate(%v) = %v, want %v", tt.err, got, tt.duplicate)
			}
			if got := asynqlock.IsLimited(tt.err); got != tt.limited {
				t.Errorf("IsLimited(%v) = %v, want %v", tt.err, got, tt.limited)
			}
			if got := asynqlock.IsFailure(tt.err); got != tt.failure {
				t.Errorf("IsFailure(%v) = %v, want %v", tt.err, got, tt.failure)
			}
		})
	}
}

// TestNotRunErrorsMatch: the errors of tasks the Guard did not run.
func TestNotRunErrorsMatch(t *testing.T) {
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		desc           string
		err            error
		locked, revoke bool
		msg            string
	}{
		{"requeued", &asynqlock.DuplicateError{ExpiresAt: exp}, true, false,
			"asynqlock: duplicate task: key busy until 2030-01-02T03:04:05Z; requeued"},
		{"dropped", &asynqlock.DuplicateError{ExpiresAt: exp, Dropped: true}, true, true,
			"asynqlock: duplicate task: key busy until 2030-01-02T03:04:05Z; dropped"},
		{"done", &asynqlock.DuplicateError{Done: true, Dropped: true}, false, true,
			"asynqlock: duplicate task: key already done; dropped"},
		{"over the limit, requeued", &asynqlock.LimitError{Limit: 2, ExpiresAt: exp}, true, false,
			"asynqlock: concurrency limit reached: 2 tasks with this key running (earliest lease ends 2030-01-02T03:04:05Z); requeued"},
		{"over the limit after a wait", &asynqlock.LimitError{Limit: 4, ExpiresAt: exp, Waited: 5*time.Second + 300*time.Microsecond}, true, false,
			"asynqlock: concurrency limit reached: 4 tasks with this key running (earliest lease ends 2030-01-02T03:04:05Z), no slot freed within 5s; requeued"},
		{"over the limit, dropped", &asynqlock.LimitError{Limit: 5, ExpiresAt: exp, Dropped: true}, true, true,
			"asynqlock: concurrency limit reached: 5 tasks with this key running (earliest lease ends 2030-01-02T03:04:05Z); dropped"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := errors.Is(tt.err, lock.ErrLocked); got != tt.locked {
				t.Errorf("errors.Is(ErrLocked) = %v, want %v", got, tt.locked)
			}
			if got := errors.Is(tt.err, asynq.RevokeTask); got != tt.revoke {
				t.Errorf("errors.Is(RevokeTask) = %v, want %v", got, tt.revoke)
			}
			if errors.Is(tt.err, asynq.SkipRetry) {
				t.Error("errors.Is(SkipRetry) = true")
			}
			if got := tt.err.Error(); got != tt.msg {
				t.Errorf("Error() = %q, want %q", got, tt.msg)
			}
		})
	}
}

func TestPolicyString(t *testing.T) {
	for p, want := range map[asynqlock.Policy]string{asynqlock.Requeue: "requeue", asynqlock.Drop: "drop", 9: "Policy(9)"} {
		if got := p.String(); got != want {
			t.Errorf("Policy(%d).String() = %q, want %q", int(p), got, want)
		}
	}
}
