package httpkey

import (
	"slices"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func TestBuild(t *testing.T) {
	long := "POST /" + strings.Repeat("a", 200)
	tests := []struct {
		desc                      string
		prefix, route, scope, key string
		want                      string
	}{
		{"all parts", "orders:", "POST /orders", "alice", "k1", "orders:POST /orders:alice:k1"},
		{"no route", "p:", "", "alice", "k1", "p::alice:k1"},
		{"no scope", "p:", "POST /", "", "k1", "p:POST /::k1"},
		{"neither", "p:", "", "", "k:1", "p:::k:1"},
		{"escaped route and scope", "", `GET /a:b\c`, "t:1", "k", `GET /a\:b\\c:t\:1:k`},
		{"NFC scope as is", "", "", "\u00e9", "k", ":\u00e9:k"},
		{"NFD scope encoded", "", "", "e\u0301", "k", `:\=ZcyB:k`},
		{"NFD key encoded", "", "", "", "e\u0301", `::\=ZcyB`},
		{"key beginning with a backslash encoded", "", "", "", `\=ZcyB`, `::\=XD1aY3lC`},
		{"key with a backslash inside as is", "", "", "", `a\b`, `::a\b`},
		{"scope not UTF-8 encoded", "", "", "\xff", "k", `:\=_w:k`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			got, used := Build(tt.prefix, tt.route, tt.scope, tt.key)
			if got != tt.want || !strings.HasSuffix(got[:used], ":") || got[used:] != tt.key && !strings.HasPrefix(got[used:], `\=`) {
				t.Errorf("Build = %q, %d; want %q, and the key after the second ':'", got, used, tt.want)
			}
		})
	}
	// Distinct (scope, key) pairs never give one name.
	a, _ := Build("", "", "a:b", "c")
	b, _ := Build("", "", "a", "b:c")
	if a == b {
		t.Errorf("scope a:b key c and scope a key b:c both give %q", a)
	}
	// A long route is a hash, and two long routes two hashes.
	r1, r2 := Route(long), Route(long+"b")
	if !strings.HasPrefix(r1, `\#`) || len(r1) > MaxRouteBytes || r1 == r2 {
		t.Errorf("Route of long routes = %q, %q; want two distinct short hashes", r1, r2)
	}
}

// FuzzBuildInjective: distinct (route, scope, key) triples never give one
// storage key, after the backend's normalisation (lockdriver.NormalizeKey)
// and its storage key (wire.MakeStorageKey) too: two principals that
// Unicode calls equivalent, a scoped and an unscoped key, a route and no
// route all stay apart. Each input is split into the triple on a byte the
// fuzzer chooses; an empty route or scope is absent.
func FuzzBuildInjective(f *testing.F) {
	f.Add("POST /x|\u00e9|k", "POST /x|e\u0301|k", byte('|'))
	f.Add("POST /x||alice:k", "POST /x|alice|k", byte('|'))
	f.Add("|alice|k", "alice||k", byte('|'))
	f.Add("r|s|\\=ZcyB", "r|s|e\u0301", byte('|'))
	f.Add("r|a:b|c", "r|a|b:c", byte('|'))
	f.Add("\u1100|\u1161|k", "\uac00||k", byte('|'))
	f.Fuzz(func(t *testing.T, a, b string, sep byte) {
		ta, tb := strings.SplitN(a, string(sep), 3), strings.SplitN(b, string(sep), 3)
		if len(ta) != 3 || len(tb) != 3 || ta[2] == "" || tb[2] == "" || slices.Equal(ta, tb) {
			return
		}
		ka, _ := Build("p:", ta[0], ta[1], ta[2])
		kb, _ := Build("p:", tb[0], tb[1], tb[2])
		if ka == kb {
			t.Fatalf("%q and %q both give %q", ta, tb, ka)
		}
		na, errA := lockdriver.NormalizeKey(ka)
		nb, errB := lockdriver.NormalizeKey(kb)
		if errA == nil && na != ka || errB == nil && nb != kb {
			t.Fatalf("normalisation changed %q, %q to %q, %q", ka, kb, na, nb)
		}
		if errA != nil || errB != nil {
			return // refused (too long): no lock, no storage key
		}
		sa, errA := wire.MakeStorageKey("syncguard", na, wire.KeyBudget, wire.KeyReserve)
		sb, errB := wire.MakeStorageKey("syncguard", nb, wire.KeyBudget, wire.KeyReserve)
		if errA != nil || errB != nil || sa == sb {
			t.Fatalf("%q and %q: storage keys %q, %q (%v, %v); want two", ta, tb, sa, sb, errA, errB)
		}
	})
}
