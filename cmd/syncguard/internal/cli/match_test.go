package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestLsMatchAgreesWithRedis: --match reads a pattern as Redis's SCAN
// MATCH does, on keys of every kind of character it treats specially.
func TestLsMatchAgreesWithRedis(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	p := prefix(t)
	keys := []string{"a", "ab", "abc", "a:b", "b", "ba", "a*b", "a?b", "a[b", "a]b", `a\b`, "a-b", "aXb", "abb", "", "^", "x^y", "a^b", "zzz"}
	for _, k := range keys {
		rdb.Set(ctx, p+"|"+k, "1", time.Minute)
	}
	patterns := []string{"*", "a*", "*b", "a?b", "a*b", "a\\*b", "a\\?b", "[ab]*", "[^a]*", "a[a-c]b", "a[c-a]b", "a[^b]b", "a[\\]]b",
		"a[\\[]b", "a\\\\b", "?", "??", "*a*b*", "a[-]b", "a[b-]b", "[x]^y", "a[^^]b", "[", "a[", "a[b", "**", "*?*", "zz?", "\\z*",
		"[]a]*", "a[a\\-c]b", "[\\^a]*", "a[b-]b", "a[\\]-c]b", "*[", "[a-]", "a[^]b", "x^?", "[z-a]*"}
	for _, pat := range patterns {
		var want []string
		for _, k := range rdb.Keys(ctx, globEscape(p+"|")+pat).Val() {
			want = append(want, strings.TrimPrefix(k, p+"|"))
		}
		var got []string
		for _, k := range keys {
			if globMatch(pat, k) {
				got = append(got, k)
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if strings.Join(want, "\x00") != strings.Join(got, "\x00") {
			t.Errorf("pattern %q: globMatch %q, Redis %q", pat, got, want)
		}
	}
	// Characters, not bytes: "?" is one character.
	if !globMatch("caf?", "café") || globMatch("caf??", "café") {
		t.Errorf(`globMatch("caf?", "café") should hold, "caf??" not`)
	}
}

// TestLsMatchHashedKeys: a lock stored under a hashed name (a key whose
// storage key would pass the 1000-byte budget; the libraries take keys of
// 512 bytes at most, so a writer of the wire format with longer keys) is
// listed by --match from its lock data, as is a lock whose name is 22
// base64url characters without being hashed, and a key of the TypeScript
// library's wire format.
func TestLsMatchHashedKeys(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	now, _ := rdb.Time(ctx).Result()
	long := "report:" + strings.Repeat("x", 1000)
	name, err := wire.MakeStorageKey(p, long, redisbackend.KeyBudget, redisbackend.KeyReserve)
	if err != nil || len(name) != len(p)+1+22 {
		t.Fatalf("MakeStorageKey = %q, %v; want a hashed name", name, err)
	}
	v := fmt.Sprintf(`{"lockId":%q,"expiresAtMs":%d,"acquiredAtMs":%d,"key":%q,"fence":"000000000000007"}`,
		lockdriver.NewLockID(), now.UnixMilli()+60_000, now.UnixMilli(), long)
	rdb.Set(ctx, name, v, time.Minute)
	for _, k := range []string{"report:short", "ABCDEFGHIJKLMNOPQRSTUV", "other"} {
		if _, err := b.Acquire(ctx, k, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		glob string
		want []string
	}{
		{"report:*", []string{long, "report:short"}},
		{"*xxx", []string{long}},
		{"ABCDEFGHIJKLMNOPQRSTU?", []string{"ABCDEFGHIJKLMNOPQRSTUV"}},
		{"?????????????????????*", []string{long, "ABCDEFGHIJKLMNOPQRSTUV"}},
		{"*", []string{long, "ABCDEFGHIJKLMNOPQRSTUV", "other", "report:short"}},
	} {
		r := syncguard(t, "ls", "--json", "--redis", urlOf(srv), "--prefix", p, "--match", tc.glob)
		out := lines(r.out)
		var got []string
		for _, line := range out[:len(out)-1] {
			var row lsRow
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatalf("ls --match %q: %q: %v", tc.glob, line, err)
			}
			got = append(got, row.Key)
		}
		sort.Strings(got)
		sort.Strings(tc.want)
		if r.code != 0 || strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("ls --match %q: status %d, stderr %q, keys %.60q; want %.60q", tc.glob, r.code, r.err, got, tc.want)
		}
	}
}

// TestRouteAsPrinted: --route takes an Echo route as written or as a key
// prints it (its ':' escaped); both name the key the middleware locks.
func TestRouteAsPrinted(t *testing.T) {
	written := &options{route: "POST /accounts/:id/withdraw", scope: "alice"}
	printed := &options{route: `POST /accounts/\:id/withdraw`, scope: "alice"}
	want := `POST /accounts/\:id/withdraw:alice:42`
	if got := keyOf(written, "42"); got != want {
		t.Errorf("keyOf(route as written) = %q, want %q", got, want)
	}
	if got := keyOf(printed, "42"); got != want {
		t.Errorf("keyOf(route as printed) = %q, want %q", got, want)
	}
}
