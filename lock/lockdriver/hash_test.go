package lockdriver_test

import (
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func TestHashKey(t *testing.T) {
	// Expected values come from the TypeScript algorithm run under node
	// (String.prototype.normalize("NFC") and UTF-16 code units), not from
	// this package.
	tests := []struct {
		desc string
		in   string
		want string
	}{
		{"empty", "", "000000000000000000000000"},
		{"syncguard vector", "resource:123", "e90a28c676a29a3291e2874a"},
		{"one byte", "a", "0000006100000123000002a7"},
		{"lock id", "Ab3kX9_-zz11AAbbCCdd0Q", "8c1bb729d183b47be3d2411f"},
		{"latin-1", "\u00e9", "000000e9000002bb0000065f"},
		{"composed", "caf\u00e9", "002e7a21248b3503a22cdb87"},
		{"mixed", "user:Zo\u00eb/order:42", "49579b32ad862c763d9ec33e"},
		{"CJK", "日本語キー", "ccd595c61171ae728a90fb8a"},
		{"highest BMP", "\uffff", "0000ffff0002fffd0006fff9"},
		{"Ohm sign maps to Omega", "\u2126", "000003a900000afb0000199f"},
		{"emoji", "😀", "001b0d6301446cc92f4d8055"},
		{"emoji after ascii", "lock:🔒", "144a8d244d99808ceecf5b1c"},
		{"astral then ascii", "𝄞music", "592c74fbc8e0c4717966805d"},
		{"highest code point", "\U0010ffff", "001b83e0014a0a80301fe400"},
		{"long, wraps int32", strings.Repeat("a", 512), "9b502000d9518000d5380000"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got := lockdriver.HashKey(tt.in); got != tt.want {
				t.Errorf("HashKey(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHashKeyNFCEquivalent(t *testing.T) {
	tests := []struct {
		desc string
		a, b string
	}{
		{"combining acute", "cafe\u0301", "caf\u00e9"},
		{"Ohm and Omega", "\u2126", "\u03a9"},
		{"reordered marks", "a\u0323\u0301", "a\u0301\u0323"},
		{"Hangul jamo", "\u1100\u1161", "\uac00"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if got, want := lockdriver.HashKey(tt.a), lockdriver.HashKey(tt.b); got != want {
				t.Errorf("HashKey(%q) = %q, want %q (= HashKey(%q))", tt.a, got, want, tt.b)
			}
		})
	}
	if lockdriver.HashKey("a") == lockdriver.HashKey("b") {
		t.Errorf("HashKey(\"a\") == HashKey(\"b\"), want distinct")
	}
}
