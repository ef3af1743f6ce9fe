package wire_test

import (
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

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
