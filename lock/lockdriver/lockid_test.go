package lockdriver_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

var lockIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

func TestNewLockIDFormat(t *testing.T) {
	for range 100 {
		id := lockdriver.NewLockID()
		if len(id) != lockdriver.LockIDLen || !lockIDRe.MatchString(id) {
			t.Fatalf("NewLockID() = %q, want 22 base64url characters", id)
		}
		if err := lockdriver.ValidateLockID(id); err != nil {
			t.Fatalf("ValidateLockID(%q) = %v, want nil", id, err)
		}
	}
}

func TestNewLockIDUnique(t *testing.T) {
	const n = 10000
	seen := make(map[string]struct{}, n)
	for range n {
		id := lockdriver.NewLockID()
		if _, dup := seen[id]; dup {
			t.Fatalf("NewLockID() returned %q twice in %d calls", id, len(seen)+1)
		}
		seen[id] = struct{}{}
	}
}

func TestValidateLockID(t *testing.T) {
	valid := "Ab3kX9_-zz11AAbbCCdd0Q"
	tests := []struct {
		desc  string
		id    string
		valid bool
	}{
		{"valid", valid, true},
		{"all dashes and underscores", strings.Repeat("-_", 11), true},
		{"digits", strings.Repeat("0", 22), true},
		{"empty", "", false},
		{"21 chars", valid[:21], false},
		{"23 chars", valid + "A", false},
		{"plus", "+" + valid[1:], false},
		{"slash", valid[:21] + "/", false},
		{"padding", valid[:20] + "==", false},
		{"space", valid[:10] + " " + valid[11:], false},
		{"non-ASCII, 22 bytes", valid[:20] + "é", false},
		{"non-ASCII, 22 runes", valid[:21] + "é", false},
		{"NUL", valid[:21] + "\x00", false},
		{"newline", valid[:21] + "\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			err := lockdriver.ValidateLockID(tt.id)
			if tt.valid {
				if err != nil {
					t.Errorf("ValidateLockID(%q) = %v, want nil", tt.id, err)
				}
				return
			}
			wantCode(t, err, lock.CodeInvalidArgument)
		})
	}
}
