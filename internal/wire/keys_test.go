package wire_test

import (
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
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
			got, err := wire.NormalizeKey(tt.key)
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

func TestMakeStorageKey(t *testing.T) {
	// Hashed vectors computed independently:
	// "prefix:" + base64url_nopad(sha256("prefix:key")[:16]).
	tests := []struct {
		desc    string
		prefix  string
		key     string
		limit   int
		reserve int
		want    string
		wantErr bool
	}{
		{desc: "syncguard vector", prefix: "p", key: strings.Repeat("x", 600), limit: 500, want: "p:ov3k181KlAgqs5sWJvvgfA"},
		{desc: "short key kept", prefix: "syncguard", key: "resource:123", limit: 1000, reserve: 26, want: "syncguard:resource:123"},
		{desc: "trailing colons stripped", prefix: "p::", key: "k", limit: 1000, reserve: 26, want: "p:k"},
		{desc: "trailing colons stripped before hashing", prefix: "p::", key: strings.Repeat("x", 600), limit: 500, want: "p:ov3k181KlAgqs5sWJvvgfA"},
		{desc: "only the trailing colons stripped", prefix: "a:b:", key: "k", limit: 1000, want: "a:b:k"},
		{desc: "empty prefix", prefix: "", key: "k", limit: 1000, want: ":k"},
		{desc: "exact boundary kept", prefix: "p", key: strings.Repeat("x", 472), limit: 500, reserve: 26, want: "p:" + strings.Repeat("x", 472)},
		{desc: "one past the boundary hashed", prefix: "p", key: strings.Repeat("x", 473), limit: 500, reserve: 26, want: "p:MGhPtKnCPm2dTMq_IoHiqg"},
		{desc: "ascii hashed", prefix: "syncguard", key: strings.Repeat("k", 1000), limit: 1000, reserve: 26, want: "syncguard:AQTijL8lgMAhLiVpXlR-ew"},
		{desc: "2-byte runes hashed", prefix: "syncguard", key: strings.Repeat("é", 490), limit: 1000, reserve: 26, want: "syncguard:R9XIqcjgvcxLtFmRz6DHkA"},
		{desc: "3-byte runes hashed", prefix: "syncguard", key: strings.Repeat("日本", 200), limit: 1000, reserve: 26, want: "syncguard:L5D63fdrE942OQ_UDpNVdQ"},
		{desc: "hashed form exactly fits", prefix: "p", key: strings.Repeat("x", 600), limit: 24, want: "p:ov3k181KlAgqs5sWJvvgfA"},
		{desc: "hashed form one byte too long", prefix: "p", key: strings.Repeat("x", 600), limit: 23, wantErr: true},
		{desc: "prefix too long to hash into", prefix: strings.Repeat("p", 100), key: "k", limit: 100, reserve: 26, wantErr: true},
		{desc: "reserve eats the limit", prefix: "p", key: "k", limit: 26, reserve: 26, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, err := wire.MakeStorageKey(tt.prefix, tt.key, tt.limit, tt.reserve)
			if tt.wantErr {
				wantCode(t, err, lock.CodeInvalidArgument)
				return
			}
			if err != nil {
				t.Fatalf("MakeStorageKey: %v", err)
			}
			if got != tt.want {
				t.Errorf("MakeStorageKey(%q, %.20q..., %d, %d) = %q, want %q", tt.prefix, tt.key, tt.limit, tt.reserve, got, tt.want)
			}
			if len(got)+tt.reserve > tt.limit {
				t.Errorf("len(%q) + %d = %d, want <= %d", got, tt.reserve, len(got)+tt.reserve, tt.limit)
			}
		})
	}
}

// TestFenceKeyTwoStep checks the syncguard fence key layout: the fence key
// is built from the full lock key, not from the user key.
func TestFenceKeyTwoStep(t *testing.T) {
	lockKey, err := wire.MakeStorageKey("syncguard", "resource:1", 1000, 26)
	if err != nil {
		t.Fatalf("lock key: %v", err)
	}
	got, err := wire.MakeStorageKey("syncguard", "fence:"+lockKey, 1000, 26)
	if err != nil {
		t.Fatalf("fence key: %v", err)
	}
	if want := "syncguard:fence:syncguard:resource:1"; got != want {
		t.Errorf("fence key = %q, want %q", got, want)
	}
}

// TestNormalizeKeyStreamSafe: a run of more than 30 combining marks is
// where x/text's NFC (Stream-Safe format, inserts U+034F) and JavaScript's
// normalize("NFC") differ, so such keys are refused rather than stored
// under a different Redis key than the TypeScript library would use.
func TestNormalizeKeyStreamSafe(t *testing.T) {
	long := "a" + strings.Repeat("\u0301", 35)
	if _, err := wire.NormalizeKey(long); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("35 combining marks: err = %v, want InvalidArgument", err)
	}
	ok := "a" + strings.Repeat("\u0301", 5)
	if _, err := wire.NormalizeKey(ok); err != nil {
		t.Errorf("5 combining marks: %v", err)
	}
	// A U+034F the user wrote is kept.
	if got, err := wire.NormalizeKey("a\u034fb"); err != nil || got != "a\u034fb" {
		t.Errorf("NormalizeKey(a U+034F b) = %q, %v", got, err)
	}
}
