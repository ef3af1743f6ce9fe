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
