package wire_test

import (
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

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
