package lock_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// TestRetryZeroValue: the zero Retry is the documented default schedule:
// exponential backoff with equal jitter from DefaultBaseDelay.
func TestRetryZeroValue(t *testing.T) {
	var r lock.Retry
	if r.Fixed || r.NoJitter {
		t.Errorf("zero Retry: Fixed %v, NoJitter %v; want exponential backoff with jitter", r.Fixed, r.NoJitter)
	}
	// A zero BaseDelay is DefaultBaseDelay, not a retry at once.
	f := newFake()
	hold(t, f, "k")
	attempts := acquireTimes(f)
	_, err := lock.Acquire(context.Background(), f, "k",
		lock.WithRetry(lock.Retry{MaxRetries: 1, NoJitter: true}), lock.WithWait(time.Minute))
	wantCode(t, err, lock.CodeAcquisitionTimeout)
	at := attempts()
	if len(at) != 2 {
		t.Fatalf("attempts = %d, want 2", len(at))
	}
	// Timers never fire early, so only the lower bound is safe here.
	if gap := at[1].Sub(at[0]); gap < lockdriver.DefaultBaseDelay {
		t.Errorf("gap between attempts = %v, want >= DefaultBaseDelay (%v)", gap, lockdriver.DefaultBaseDelay)
	}
}

// TestWithRetryLastWins: the last WithRetry replaces earlier ones as a
// whole; a field it leaves zero takes the default, not an earlier value.
func TestWithRetryLastWins(t *testing.T) {
	fast := func(n int) lock.Option {
		return lock.WithRetry(lock.Retry{MaxRetries: n, BaseDelay: time.Millisecond, Fixed: true})
	}
	tests := []struct {
		desc     string
		opts     []lock.Option
		attempts int
	}{
		{"the later count", []lock.Option{fast(5), fast(2)}, 3},
		{"the earlier count", []lock.Option{fast(2), fast(5)}, 6},
		{"a zero count is the default", []lock.Option{fast(2), fast(0)}, lockdriver.DefaultMaxRetries + 1},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			f := newFake()
			hold(t, f, "k")
			_, err := lock.Acquire(context.Background(), f, "k", append(tt.opts, lock.WithWait(time.Minute))...)
			wantCode(t, err, lock.CodeAcquisitionTimeout)
			if got := attempts(f); got != tt.attempts {
				t.Errorf("attempts = %d, want %d", got, tt.attempts)
			}
		})
	}
	// Only the schedule in force is validated.
	if err := lockdriver.ValidateOptions(lock.WithRetry(lock.Retry{BaseDelay: -1}), lock.WithRetry(lock.Retry{})); err != nil {
		t.Errorf("ValidateOptions(a bad Retry replaced by a good one) = %v, want nil", err)
	}
}

func TestValidateRetry(t *testing.T) {
	tests := []struct {
		desc    string
		r       lock.Retry
		wantErr string // "" for valid
	}{
		{desc: "zero"},
		{desc: "every field set", r: lock.Retry{MaxRetries: math.MaxInt32, BaseDelay: time.Hour, MaxDelay: time.Second,
			Fixed: true, NoJitter: true}},
		{desc: "max delay below base delay", r: lock.Retry{BaseDelay: time.Second, MaxDelay: time.Millisecond}},
		{desc: "negative retries", r: lock.Retry{MaxRetries: -1}, wantErr: "max retries must not be negative"},
		{desc: "negative base delay", r: lock.Retry{BaseDelay: -time.Nanosecond}, wantErr: "delays must not be negative"},
		{desc: "negative max delay", r: lock.Retry{MaxDelay: -time.Second}, wantErr: "delays must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			err := lockdriver.ValidateOptions(lock.WithRetry(tt.r))
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("ValidateOptions = %v, want nil", err)
				}
				return
			}
			var e *lock.Error
			if !errors.As(err, &e) || e.Code != lock.CodeInvalidArgument || e.Op != "config" || e.Msg != tt.wantErr {
				t.Errorf("ValidateOptions = %#v, want an InvalidArgument *lock.Error, Op config, Msg %q", err, tt.wantErr)
			}
		})
	}
}
