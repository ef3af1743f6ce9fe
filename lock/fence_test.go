package lock_test

import (
	"cmp"
	"math/rand/v2"
	"testing"

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
			got, err := lock.FormatFence(tt.n)
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
			got, err := lock.ParseFence(tt.in)
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

func TestFenceOrderingIsNumeric(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const limit = 1e15
	for i := range 5000 {
		var a, b uint64
		switch i % 3 {
		case 0: // anywhere in range
			a, b = r.Uint64N(limit), r.Uint64N(limit)
		case 1: // neighbours, including across digit counts
			a = r.Uint64N(limit - 1)
			b = a + r.Uint64N(2)
		default: // small against large
			a, b = r.Uint64N(1000), r.Uint64N(limit)
		}
		if i%2 == 1 {
			a, b = b, a
		}
		fa, err := lock.FormatFence(a)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := lock.FormatFence(b)
		if err != nil {
			t.Fatal(err)
		}
		want := cmp.Compare(a, b)
		if got := fa.Compare(fb); got != want {
			t.Fatalf("%q.Compare(%q) = %d, want %d", fa, fb, got, want)
		}
		if got := cmp.Compare(string(fa), string(fb)); got != want {
			t.Fatalf("string order of %q and %q = %d, want %d", fa, fb, got, want)
		}
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
		{desc: "at warn threshold", in: string(lock.FenceWarn)},
		{desc: "past warn threshold", in: "090000000000001", wantWarn: true},
		{desc: "at max", in: string(lock.FenceMax), wantWarn: true},
		{desc: "past max", in: "900000000000001", wantErr: true},
		{desc: "largest", in: "999999999999999", wantErr: true},
		{desc: "malformed", in: "12", wantErr: true},
		{desc: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, warn, err := lock.CheckFence(tt.in)
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

func TestFenceString(t *testing.T) {
	if got, want := lock.Fence("000000000000042").String(), "000000000000042"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
