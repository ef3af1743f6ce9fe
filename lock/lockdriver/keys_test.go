package lockdriver_test

import (
	"strconv"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func TestNormalizeKey(t *testing.T) {
	tests := []struct {
		desc    string
		key     string
		want    string
		wantErr bool
	}{
		{desc: "empty", key: "", wantErr: true},
		{desc: "ascii", key: "resource:123", want: "resource:123"},
		{desc: "512 bytes", key: strings.Repeat("k", 512), want: strings.Repeat("k", 512)},
		{desc: "513 bytes", key: strings.Repeat("k", 513), wantErr: true},
		{desc: "2-byte runes at the limit", key: strings.Repeat("é", 256), want: strings.Repeat("é", 256)},
		{desc: "2-byte runes past the limit", key: strings.Repeat("é", 256) + "a", wantErr: true},
		{desc: "3-byte runes at the limit", key: strings.Repeat("日", 170) + "ab", want: strings.Repeat("日", 170) + "ab"},
		{desc: "4-byte runes at the limit", key: strings.Repeat("🔒", 128), want: strings.Repeat("🔒", 128)},
		{desc: "4-byte rune crossing the limit", key: strings.Repeat("a", 509) + "🔒", wantErr: true},
		{desc: "NFC composes", key: "cafe\u0301", want: "caf\u00e9"},
		{desc: "NFC maps singletons", key: "\u2126hm", want: "\u03a9hm"},
		{desc: "NFC shrinks below the limit", key: strings.Repeat("a", 510) + "e\u0301", want: strings.Repeat("a", 510) + "\u00e9"},
		// U+0958 is a composition exclusion: NFC decomposes it into two
		// runes, growing from 3 to 6 bytes.
		{desc: "NFC grows to the limit", key: strings.Repeat("a", 506) + "\u0958", want: strings.Repeat("a", 506) + "\u0915\u093c"},
		{desc: "NFC grows past the limit", key: strings.Repeat("a", 509) + "\u0958", wantErr: true},
		{desc: "invalid UTF-8 byte", key: "key\xff", wantErr: true},
		{desc: "truncated UTF-8", key: "caf\xc3", wantErr: true},
		{desc: "surrogate encoded in UTF-8", key: "\xed\xa0\x80", wantErr: true},
		{desc: "spaces kept", key: "  key  ", want: "  key  "},
		{desc: "control characters kept", key: "\tkey\n", want: "\tkey\n"},
		{desc: "single space", key: " ", want: " "},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := lockdriver.NormalizeKey(tt.key)
			if tt.wantErr {
				wantCode(t, err, lock.CodeInvalidArgument)
				if got != "" {
					t.Errorf("NormalizeKey returned %q with an error, want \"\"", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeKey: %v", err)
			}
			if got != tt.want {
				t.Errorf("NormalizeKey(%q) = %q, want %q", tt.key, got, tt.want)
			}
		})
	}
}

// TestNormalizeKeyStreamSafe: a run of more than 30 combining marks is
// where x/text's NFC (Stream-Safe format, inserts U+034F) and JavaScript's
// normalize("NFC") differ, so such keys are refused rather than stored
// under a different Redis key than the TypeScript library would use.
func TestNormalizeKeyStreamSafe(t *testing.T) {
	long := "a" + strings.Repeat("\u0301", 35)
	if _, err := lockdriver.NormalizeKey(long); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("35 combining marks: err = %v, want InvalidArgument", err)
	}
	ok := "a" + strings.Repeat("\u0301", 5)
	if _, err := lockdriver.NormalizeKey(ok); err != nil {
		t.Errorf("5 combining marks: %v", err)
	}
	// A U+034F the user wrote is kept.
	if got, err := lockdriver.NormalizeKey("a\u034fb"); err != nil || got != "a\u034fb" {
		t.Errorf("NormalizeKey(a U+034F b) = %q, %v", got, err)
	}
}

// unicodeMajor is the major Unicode version of Go's NFC tables.
func unicodeMajor(t testing.TB) int {
	t.Helper()
	major, _, _ := strings.Cut(norm.Version, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		t.Fatalf("norm.Version = %q: %v", norm.Version, err)
	}
	return n
}

// TestNormalizeKeyUnicodeVersion: a key with a code point that Go's NFC
// tables do not assign is refused, because a JavaScript runtime with newer
// tables may normalise it differently (and both would hold the lock). The
// vectors are what Node 20 (Unicode 17) returns for key.normalize("NFC").
// With tables that know the character (Go 1.27 ships Unicode 17), the key
// must be accepted and normalised as Node does.
func TestNormalizeKeyUnicodeVersion(t *testing.T) {
	major := unicodeMajor(t)
	tests := []struct {
		desc  string
		key   string
		since int    // Unicode version that assigned the newest code point; 0: never assigned
		node  string // NFC in Node 20; "" when it equals key
	}{
		// Rejected under Unicode 15 tables.
		{desc: "U+0897 reordered by Node", key: "a\u0897\u0316", since: 16, node: "a\u0316\u0897"},
		{desc: "U+16D67 pair composed by Node", key: "\U00016D67\U00016D67", since: 16, node: "\U00016D68"},
		{desc: "new character after ASCII", key: "resource:\U00016D67", since: 16},
		{desc: "emoji from Unicode 16", key: "face \U0001FAE9", since: 16},
		{desc: "noncharacter U+FFFF", key: "k\uffff", since: 0},
		{desc: "noncharacter U+FDD0", key: "\ufdd0", since: 0},
		{desc: "noncharacter U+10FFFF", key: "k\U0010FFFF", since: 0},
		{desc: "reserved U+0378", key: "\u0378", since: 0},
		{desc: "reserved plane 4", key: "\U00040000", since: 0},
		// Accepted: every code point assigned in Unicode 15.
		{desc: "Latin", key: "café", since: 1},
		{desc: "Latin decomposed", key: "cafe\u0301", since: 1, node: "café"},
		{desc: "CJK", key: "日本", since: 1},
		{desc: "emoji", key: "lock 🔒", since: 6},
		{desc: "emoji from Unicode 15", key: "\U0001FAE8", since: 15},
		{desc: "ZWJ sequence", key: "👩\u200d💻", since: 8},
		{desc: "private use BMP", key: "\ue000", since: 1},
		{desc: "private use plane 16", key: "\U0010FFFD", since: 2},
		{desc: "U+FFFD", key: "\ufffd", since: 1},
		{desc: "C1 control", key: "k\u0085", since: 1},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := lockdriver.NormalizeKey(tt.key)
			if tt.since == 0 || tt.since > major {
				wantCode(t, err, lock.CodeInvalidArgument)
				if got != "" {
					t.Errorf("NormalizeKey returned %q with an error, want \"\"", got)
				}
				if err != nil && strings.Contains(err.Error(), tt.key) {
					t.Errorf("error %q contains the key", err)
				}
				if lockdriver.AllAssigned(tt.key) {
					t.Errorf("AllAssigned(%+q) = true, want false", tt.key)
				}
				return
			}
			want := tt.node
			if want == "" {
				want = tt.key
			}
			if err != nil || got != want {
				t.Errorf("NormalizeKey(%+q) = %+q, %v; want %+q (as JavaScript normalises it)", tt.key, got, err, want)
			}
			if !lockdriver.AllAssigned(tt.key) {
				t.Errorf("AllAssigned(%+q) = false, want true", tt.key)
			}
		})
	}
}

func TestAllAssigned(t *testing.T) {
	for _, tt := range []struct {
		s    string
		want bool
	}{
		{"", true},
		{"syncguard", true},
		{"\x00\x7f", true},
		{"café", true},
		{"caf\xc3", false},      // truncated UTF-8
		{"\xed\xa0\x80", false}, // surrogate
		{"\xff", false},
		{"a\ufdefb", false},
	} {
		if got := lockdriver.AllAssigned(tt.s); got != tt.want {
			t.Errorf("AllAssigned(%+q) = %v, want %v", tt.s, got, tt.want)
		}
	}
	// The assigned table exists for the normaliser's version, so the
	// check is not the ASCII-only fallback.
	if rangetable.Assigned(norm.Version) == nil {
		t.Fatalf("rangetable.Assigned(%q) = nil", norm.Version)
	}
	// Every code point is checked against the standard library's
	// categories, when they come from the same Unicode version.
	if unicode.Version == norm.Version {
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if r >= 0xD800 && r <= 0xDFFF {
				continue
			}
			if want := stdAssigned(r); lockdriver.AllAssigned(string(r)) != want {
				t.Fatalf("AllAssigned(%U) = %v, want %v", r, !want, want)
			}
		}
	}
}

// stdAssigned reports whether r has a General Category other than Cn
// (unassigned, noncharacters included) in the standard library's tables.
func stdAssigned(r rune) bool { return !unicode.Is(unicode.Cn, r) }

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
