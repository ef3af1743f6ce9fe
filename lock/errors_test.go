package lock_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// wantCode fails the test unless err is an *lock.Error with code.
func wantCode(t *testing.T, err error, code lock.Code) {
	t.Helper()
	var e *lock.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want a *lock.Error with code %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s, want %s (err: %v)", e.Code, code, err)
	}
}

func TestLockedError(t *testing.T) {
	exp := time.Unix(1700000000, 0)
	tests := []struct {
		desc string
		err  error
	}{
		{"bare", &lock.LockedError{ExpiresAt: exp}},
		{"wrapped", fmt.Errorf("ctx: %w", &lock.LockedError{ExpiresAt: exp})},
		{"in acquisition timeout", &lock.Error{Code: lock.CodeAcquisitionTimeout, Err: &lock.LockedError{ExpiresAt: exp}}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if !errors.Is(tt.err, lock.ErrLocked) {
				t.Errorf("errors.Is(%v, ErrLocked) = false, want true", tt.err)
			}
			if errors.Is(tt.err, lock.ErrNotHeld) {
				t.Errorf("errors.Is(%v, ErrNotHeld) = true, want false", tt.err)
			}
			var le *lock.LockedError
			if !errors.As(tt.err, &le) {
				t.Fatalf("errors.As(%v, *LockedError) = false, want true", tt.err)
			}
			if !le.ExpiresAt.Equal(exp) {
				t.Errorf("ExpiresAt = %v, want %v", le.ExpiresAt, exp)
			}
			if got, want := le.Error(), lock.ErrLocked.Error(); got != want {
				t.Errorf("Error() = %q, want %q", got, want)
			}
		})
	}
}

func TestErrorIs(t *testing.T) {
	base := &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire", Msg: "down", Err: io.EOF}
	tests := []struct {
		desc   string
		err    error
		target error
		want   bool
	}{
		{"same code, no op", base, &lock.Error{Code: lock.CodeServiceUnavailable}, true},
		{"same code, same op", base, &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire"}, true},
		{"same code, other op", base, &lock.Error{Code: lock.CodeServiceUnavailable, Op: "release"}, false},
		{"other code", base, &lock.Error{Code: lock.CodeInternal}, false},
		{"wrapped, same code", fmt.Errorf("outer: %w", base), &lock.Error{Code: lock.CodeServiceUnavailable}, true},
		{"unwraps to cause", base, io.EOF, true},
		{"not a sentinel", base, lock.ErrLocked, false},
		{"aborted matches context.Canceled", &lock.Error{Code: lock.CodeAborted, Err: context.Canceled}, context.Canceled, true},
		{"aborted is not DeadlineExceeded", &lock.Error{Code: lock.CodeAborted, Err: context.Canceled}, context.DeadlineExceeded, false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := errors.Is(tt.err, tt.target); got != tt.want {
				t.Errorf("errors.Is(%v, %v) = %v, want %v", tt.err, tt.target, got, tt.want)
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	tests := []struct {
		desc string
		err  *lock.Error
		want string
	}{
		{"code only", &lock.Error{Code: lock.CodeInternal}, "syncguard: Internal"},
		{"op and msg", &lock.Error{Code: lock.CodeInvalidArgument, Op: "config", Msg: "ttl must be positive"}, "syncguard: config: InvalidArgument: ttl must be positive"},
		{"with cause", &lock.Error{Code: lock.CodeNetworkTimeout, Op: "extend", Msg: "no reply", Err: io.EOF}, "syncguard: extend: NetworkTimeout: no reply: EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCodeOf(t *testing.T) {
	tests := []struct {
		desc string
		err  error
		want lock.Code
	}{
		{"nil", nil, ""},
		{"foreign", io.EOF, ""},
		{"contention", &lock.LockedError{}, ""},
		{"not held", &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}, ""},
		{"direct", &lock.Error{Code: lock.CodeRateLimited}, lock.CodeRateLimited},
		{"wrapped", fmt.Errorf("a: %w", fmt.Errorf("b: %w", &lock.Error{Code: lock.CodeAuthFailed})), lock.CodeAuthFailed},
		{"InvalidArgument helper", lockdriver.InvalidArgument("acquire", "bad"), lock.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := lock.CodeOf(tt.err); got != tt.want {
				t.Errorf("CodeOf(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

// TestErrorsNeverContainInput checks that validation errors do not echo the
// key, id or fence they reject: those may be secrets or personal data.
func TestErrorsNeverContainInput(t *testing.T) {
	const secret = "SECRET-KEY-7f3a9"
	tests := []struct {
		desc string
		call func() error
	}{
		{"key too long", func() error {
			_, err := lockdriver.NormalizeKey(strings.Repeat(secret, 40))
			return err
		}},
		{"key invalid UTF-8", func() error {
			_, err := lockdriver.NormalizeKey(secret + "\xff")
			return err
		}},
		{"storage key too long", func() error {
			_, err := wire.MakeStorageKey(secret, strings.Repeat(secret, 10), 30, 0)
			return err
		}},
		{"lock id", func() error { return lockdriver.ValidateLockID(secret + "!!!!!!") }},
		{"fence", func() error {
			_, err := lockdriver.ParseFence(secret)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			err := tt.call()
			wantCode(t, err, lock.CodeInvalidArgument)
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Error() = %q, contains the input %q", err.Error(), secret)
			}
		})
	}
}

func TestCodeTransient(t *testing.T) {
	for _, tt := range []struct {
		code lock.Code
		want bool
	}{
		{lock.CodeServiceUnavailable, true},
		{lock.CodeNetworkTimeout, true},
		{lock.CodeRateLimited, true},
		{lock.CodeAuthFailed, false},
		{lock.CodeInvalidArgument, false},
		{lock.CodeAcquisitionTimeout, false},
		{lock.CodeAborted, false},
		{lock.CodeInternal, false},
		{"", false},
	} {
		if got := tt.code.Transient(); got != tt.want {
			t.Errorf("Code(%q).Transient() = %v, want %v", tt.code, got, tt.want)
		}
	}
}
