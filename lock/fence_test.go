package lock_test

import (
	"cmp"
	"math/rand/v2"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

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
		fa, err := lockdriver.FormatFence(a)
		if err != nil {
			t.Fatal(err)
		}
		fb, err := lockdriver.FormatFence(b)
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
