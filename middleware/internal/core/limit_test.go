package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// nopLimiter is a non-nil lock.IDBackend that is never called.
type nopLimiter struct{ nopBackend }

var _ lock.IDBackend = nopLimiter{}

func (nopLimiter) NewLockID(string) (string, error) { return "", errors.ErrUnsupported }

func (nopLimiter) AcquireID(context.Context, string, string, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, errors.ErrUnsupported
}

func (nopLimiter) AcquireSlot(context.Context, string, string, int, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, errors.ErrUnsupported
}

func (nopLimiter) LookupLimit(context.Context, string) (*lock.LimitInfo, error) {
	return nil, errors.ErrUnsupported
}

// Join says the waiter cannot be told of hand-offs: lock.Acquire polls.
func (nopLimiter) Join(string, string, int, time.Duration, time.Duration) (lock.Waiter, error) {
	return nil, errors.ErrUnsupported
}

func (nopLimiter) ExtendBatch(_ context.Context, reqs []lock.Lease) []lock.ExtendResult {
	res := make([]lock.ExtendResult, len(reqs))
	for i := range res {
		res[i].Err = errors.ErrUnsupported
	}
	return res
}

func TestNewLimit(t *testing.T) {
	tests := []struct {
		desc        string
		b           lock.Backend
		c           Config
		wantErr     bool
		unsupported bool // the error also matches errors.ErrUnsupported
	}{
		{desc: "no limit on a plain backend", b: nopBackend{}},
		{desc: "limit 1", b: nopLimiter{}, c: Config{Limit: 1}},
		{desc: "limit MaxLimit", b: nopLimiter{}, c: Config{Limit: lockdriver.MaxLimit}},
		{desc: "negative limit", b: nopLimiter{}, c: Config{Limit: -1}, wantErr: true},
		{desc: "limit over MaxLimit", b: nopLimiter{}, c: Config{Limit: lockdriver.MaxLimit + 1}, wantErr: true},
		{desc: "backend without limits", b: nopBackend{}, c: Config{Limit: 3}, wantErr: true, unsupported: true},
		{desc: "limit with replay", b: recLimiter{}, c: Config{Limit: 3, Replay: &ReplayConfig{}}, wantErr: true},
		{desc: "replay without a limit", b: recLimiter{}, c: Config{Replay: &ReplayConfig{}, Unscoped: true}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			g, err := newFrom(tt.b, tt.c)
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got := g.Limit(); got != tt.c.Limit {
					t.Errorf("Limit() = %d, want %d", got, tt.c.Limit)
				}
				return
			}
			if lock.CodeOf(err) != lock.CodeInvalidArgument || g != nil {
				t.Fatalf("New = %v, %v; want nil and an InvalidArgument error", g, err)
			}
			if got := errors.Is(err, errors.ErrUnsupported); got != tt.unsupported {
				t.Errorf("errors.Is(%v, errors.ErrUnsupported) = %v, want %v", err, got, tt.unsupported)
			}
		})
	}
}

// recLimiter is a lock.IDBackend and a lock.Recorder that is never called.
type recLimiter struct{ nopLimiter }

var _ lock.Recorder = recLimiter{}

func (recLimiter) ReleaseRecord(context.Context, lock.Lease, []byte, time.Duration) error {
	return errors.ErrUnsupported
}

func (recLimiter) Record(context.Context, string) ([]byte, bool, error) {
	return nil, false, errors.ErrUnsupported
}

func (recLimiter) ReleaseDone(context.Context, lock.Lease, time.Duration) error {
	return errors.ErrUnsupported
}

func (recLimiter) AcquireDone(context.Context, string, time.Duration) (lock.Lease, bool, error) {
	return lock.Lease{}, false, errors.ErrUnsupported
}

func (recLimiter) AcquireRecord(context.Context, string, time.Duration) (lock.Lease, []byte, error) {
	return lock.Lease{}, nil, errors.ErrUnsupported
}

func (recLimiter) IsDone(context.Context, string) (bool, error) { return false, errors.ErrUnsupported }

// TestRunLimitReached: with a limit, contention comes back as
// ErrLimitReached, still matching lock.ErrLocked and carrying the
// *lock.LockedError; without one, as plain contention.
func TestRunLimitReached(t *testing.T) {
	exp := time.Now().Add(time.Minute)
	full := fullLimiter{exp: exp}
	for _, limit := range []int{0, 2} {
		g, err := newFrom(full, Config{Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		ran, err := g.Run(context.Background(), "k", func(context.Context) error {
			t.Error("next ran on a full limit")
			return nil
		})
		var le *lock.LockedError
		if ran || !errors.Is(err, lock.ErrLocked) || !errors.As(err, &le) || !le.ExpiresAt.Equal(exp) {
			t.Errorf("limit %d: Run = %v, %v; want false and the *lock.LockedError", limit, ran, err)
		}
		if got, want := errors.Is(err, guard.ErrLimitReached), limit != 0; got != want {
			t.Errorf("limit %d: errors.Is(%v, guard.ErrLimitReached) = %v, want %v", limit, err, got, want)
		}
	}
}

// fullLimiter finds every lock and every limit full.
type fullLimiter struct {
	nopLimiter
	exp time.Time
}

func (f fullLimiter) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, &lock.LockedError{ExpiresAt: f.exp}
}

func (f fullLimiter) NewLockID(string) (string, error) { return lockdriver.NewLockID(), nil }

func (f fullLimiter) AcquireID(context.Context, string, string, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, &lock.LockedError{ExpiresAt: f.exp}
}

func (f fullLimiter) AcquireSlot(context.Context, string, string, int, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, &lock.LockedError{ExpiresAt: f.exp}
}
