package lock_test

import (
	"cmp"
	"math/rand/v2"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

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
		fa, err := wire.FormatFence(a)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := wire.FormatFence(b)
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

func TestFenceString(t *testing.T) {
	if got, want := lock.Fence("000000000000042").String(), "000000000000042"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
