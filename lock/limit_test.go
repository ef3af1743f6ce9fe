package lock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func TestWithLimitValidation(t *testing.T) {
	for _, n := range []int{-1, 0, lockdriver.MaxLimit + 1} {
		err := lockdriver.ValidateOptions(lock.WithLimit(n))
		if lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("WithLimit(%d): %v, want InvalidArgument", n, err)
		}
	}
	for _, n := range []int{1, 3, lockdriver.MaxLimit} {
		if err := lockdriver.ValidateOptions(lock.WithLimit(n)); err != nil {
			t.Errorf("WithLimit(%d): %v", n, err)
		}
	}
}

// TestWithLimitNeedsIDBackend: WithLimit on a backend without the
// extension (bare, or through hooks, which claim no more than the backend
// has) fails InvalidArgument, matching errors.ErrUnsupported, before any
// attempt.
func TestWithLimitNeedsIDBackend(t *testing.T) {
	for _, tc := range []struct {
		desc string
		wrap func(lock.Backend) lock.Backend
	}{
		{"bare", func(b lock.Backend) lock.Backend { return b }},
		{"hooked", func(b lock.Backend) lock.Backend { return lock.WithHooks(b, passHook()) }},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			f := newFake()
			_, err := lock.Acquire(context.Background(), tc.wrap(f), "k", lock.WithLimit(2))
			if lock.CodeOf(err) != lock.CodeInvalidArgument || !errors.Is(err, errors.ErrUnsupported) {
				t.Fatalf("Acquire with a limit on a backend without limits: %v", err)
			}
			if n := f.count("Acquire"); n != 0 {
				t.Fatalf("%d acquisitions reached the backend, want 0", n)
			}
		})
	}
}
