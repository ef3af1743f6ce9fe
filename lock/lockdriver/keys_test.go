package lockdriver_test

import (
	"strings"
	"testing"

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
