package lockdriver_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

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
