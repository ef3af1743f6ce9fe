package redisbackend_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"golang.org/x/text/unicode/norm"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// TestPrefixUnicode: the TypeScript library builds the fence key from the
// NFC-normalised "fence:prefix:key" while the lock key keeps the raw
// prefix, so a prefix that NFC changes (or that a newer Unicode version
// could change) gives the two languages different fence counters for one
// lock. New refuses such prefixes before any I/O.
func TestPrefixUnicode(t *testing.T) {
	t.Parallel()
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	t.Cleanup(func() { rdb.Close() })
	tests := []struct {
		desc, prefix string
		ok           bool
		since        int // Unicode version assigning the prefix's newest code point, if after 15
	}{
		{desc: "not NFC", prefix: "cafe\u0301"},
		{desc: "not NFC before a separator", prefix: "cafe\u0301:locks"},
		{desc: "singleton", prefix: "\u2126"}, // NFC maps OHM SIGN to U+03A9
		{desc: "unassigned in Unicode 15", prefix: "\U00016D67", since: 16},
		{desc: "U+0897 (Unicode 16)", prefix: "app\u0897", since: 16},
		{desc: "noncharacter", prefix: "app\uffff"},
		{desc: "NFC", prefix: "café", ok: true},
		{desc: "NFC with trailing colons", prefix: "café::", ok: true},
		{desc: "CJK", prefix: "日本:locks", ok: true},
		{desc: "private use", prefix: "app\ue000", ok: true},
		{desc: "ASCII", prefix: "syncguard", ok: true},
	}
	// Go 1.27's x/text normalises with Unicode 17: newer code points are
	// then assigned and accepted.
	major, _, _ := strings.Cut(norm.Version, ".")
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			if n, _ := strconv.Atoi(major); tt.since != 0 && tt.since <= n {
				tt.ok = true
			}
			b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: tt.prefix})
			if !tt.ok {
				if lock.CodeOf(err) != lock.CodeInvalidArgument {
					t.Fatalf("New(prefix %+q) = %v, want InvalidArgument", tt.prefix, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("New(prefix %+q): %v", tt.prefix, err)
			}
			// What makes the fence keys agree: normalising the lock key as
			// the TypeScript library does leaves it unchanged.
			p := b.Prefix()
			for _, k := range []string{"resource:1", "cafe\u0301", "\u0301x", "日本"} {
				nk, err := lockdriver.NormalizeKey(k)
				if err != nil {
					t.Fatalf("NormalizeKey(%+q): %v", k, err)
				}
				lockKey := p + ":" + nk
				if ts := norm.NFC.String("fence:" + lockKey); ts != "fence:"+lockKey {
					t.Errorf("prefix %+q, key %+q: TypeScript fence key part %+q, Go %+q", p, k, ts, "fence:"+lockKey)
				}
			}
			if strings.HasSuffix(p, ":") {
				t.Errorf("Prefix() = %q, want trailing ':' stripped", p)
			}
		})
	}
}
