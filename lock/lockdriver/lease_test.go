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

func TestFormatFence(t *testing.T) {
	tests := []struct {
		desc    string
		n       uint64
		want    lock.Fence
		wantErr bool
	}{
		{desc: "zero", n: 0, want: "000000000000000"},
		{desc: "one", n: 1, want: "000000000000001"},
		{desc: "digits in order", n: 123456789012345, want: "123456789012345"},
		{desc: "largest", n: 999999999999999, want: "999999999999999"},
		{desc: "16 digits", n: 1e15, wantErr: true},
		{desc: "max uint64", n: ^uint64(0), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := lockdriver.FormatFence(tt.n)
			if tt.wantErr {
				wantCode(t, err, lock.CodeInvalidArgument)
				return
			}
			if err != nil {
				t.Fatalf("FormatFence(%d): %v", tt.n, err)
			}
			if got != tt.want {
				t.Errorf("FormatFence(%d) = %q, want %q", tt.n, got, tt.want)
			}
			n, ok := got.Uint64()
			if !ok || n != tt.n {
				t.Errorf("%q.Uint64() = %d, %v, want %d, true", got, n, ok, tt.n)
			}
		})
	}
}

// wantCode fails t unless err is a *lock.Error with code.
func wantCode(t *testing.T, err error, code lock.Code) {
	t.Helper()
	if got := lock.CodeOf(err); got != code {
		t.Fatalf("err = %v (code %q), want code %s", err, got, code)
	}
}

func TestParseFence(t *testing.T) {
	tests := []struct {
		desc  string
		in    string
		valid bool
	}{
		{"zero", "000000000000000", true},
		{"max", "999999999999999", true},
		{"warn threshold", "090000000000000", true},
		{"empty", "", false},
		{"14 digits", "00000000000001", false},
		{"16 digits", "0000000000000001", false},
		{"letter", "00000000000000a", false},
		{"sign", "+00000000000001", false},
		{"minus", "-00000000000001", false},
		{"leading space", " 00000000000001", false},
		{"trailing newline", "00000000000001\n", false},
		{"non-ASCII digit", "0000000000000\u0661", false}, // 15 bytes, Arabic-Indic one
		{"unpadded", "42", false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := lockdriver.ParseFence(tt.in)
			if !tt.valid {
				wantCode(t, err, lock.CodeInvalidArgument)
				if _, ok := lock.Fence(tt.in).Uint64(); ok {
					t.Errorf("Fence(%q).Uint64() ok = true, want false", tt.in)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseFence(%q): %v", tt.in, err)
			}
			if string(got) != tt.in {
				t.Errorf("ParseFence(%q) = %q, want %q", tt.in, got, tt.in)
			}
		})
	}
}
