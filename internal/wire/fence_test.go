package wire_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
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
			got, err := wire.FormatFence(tt.n)
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

func TestCheckFence(t *testing.T) {
	tests := []struct {
		desc     string
		in       string
		wantWarn bool
		wantErr  bool
	}{
		{desc: "first", in: "000000000000001"},
		{desc: "at warn threshold", in: string(wire.FenceWarn)},
		{desc: "past warn threshold", in: "090000000000001", wantWarn: true},
		{desc: "at max", in: string(wire.FenceMax), wantWarn: true},
		{desc: "past max", in: "900000000000001", wantErr: true},
		{desc: "largest", in: "999999999999999", wantErr: true},
		{desc: "malformed", in: "12", wantErr: true},
		{desc: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, warn, err := wire.CheckFence(tt.in)
			if tt.wantErr {
				wantCode(t, err, lock.CodeInternal)
				return
			}
			if err != nil {
				t.Fatalf("CheckFence(%q): %v", tt.in, err)
			}
			if string(got) != tt.in || warn != tt.wantWarn {
				t.Errorf("CheckFence(%q) = %q, %v, want %q, %v", tt.in, got, warn, tt.in, tt.wantWarn)
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
