package lockdriver_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func TestNotHeldError(t *testing.T) {
	tests := []struct {
		desc   string
		reason lockdriver.NotHeldReason
	}{
		{"not found", lockdriver.NotHeldNotFound},
		{"expired", lockdriver.NotHeldExpired},
		{"not owner", lockdriver.NotHeldNotOwner},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			err := fmt.Errorf("release: %w", &lockdriver.NotHeldError{Reason: tt.reason})
			if !errors.Is(err, lock.ErrNotHeld) {
				t.Errorf("errors.Is(%v, ErrNotHeld) = false, want true", err)
			}
			if errors.Is(err, lock.ErrLocked) {
				t.Errorf("errors.Is(%v, ErrLocked) = true, want false", err)
			}
			var nh *lockdriver.NotHeldError
			if !errors.As(err, &nh) {
				t.Fatalf("errors.As(%v, *NotHeldError) = false, want true", err)
			}
			if nh.Reason != tt.reason {
				t.Errorf("Reason = %q, want %q", nh.Reason, tt.reason)
			}
			if got := nh.Error(); !strings.Contains(got, string(tt.reason)) || !strings.HasPrefix(got, lock.ErrNotHeld.Error()) {
				t.Errorf("Error() = %q, want %q followed by the reason %q", got, lock.ErrNotHeld.Error(), tt.reason)
			}
		})
	}
}
