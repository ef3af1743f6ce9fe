package guard

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// compose runs Compose over fixed parts.
func compose(parts ...string) (string, error) {
	fns := make([]func(struct{}) (string, error), len(parts))
	for i, p := range parts {
		fns[i] = func(struct{}) (string, error) { return p, nil }
	}
	return Compose(fns...)(struct{}{})
}

// decompose inverts Compose's encoding: split on unescaped ':' and drop
// the escaping '\'. ok is false for a string Compose cannot produce.
func decompose(key string) (parts []string, ok bool) {
	var cur strings.Builder
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '\\':
			if i+1 == len(key) || (key[i+1] != '\\' && key[i+1] != ':') {
				return nil, false
			}
			i++
			cur.WriteByte(key[i])
		case ':':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, cur.String()), true
}

// TestComposeDistinct: a ':' (or '\') inside a part cannot move the
// boundary between parts, so one tenant cannot name another's lock.
func TestComposeDistinct(t *testing.T) {
	tests := []struct {
		parts []string
		want  string
	}{
		{[]string{"acme", "42"}, "acme:42"}, // parts without ':' or '\' read as before
		{[]string{"a:b", "c"}, `a\:b:c`},
		{[]string{"a", "b:c"}, `a:b\:c`},
		{[]string{"a", "b", "c"}, "a:b:c"},
		{[]string{`a\`, "b"}, `a\\:b`},
		{[]string{`a\:b`}, `a\\\:b`},
		{[]string{"a", `\:b`}, `a:\\\:b`},
		{[]string{":"}, `\:`},
		{[]string{":", ":"}, `\::\:`},
		{[]string{"日本", "é:x"}, `日本:é\:x`},
	}
	seen := map[string][]string{}
	for _, tt := range tests {
		got, err := compose(tt.parts...)
		if err != nil || got != tt.want {
			t.Errorf("Compose(%q) = %q, %v; want %q", tt.parts, got, err, tt.want)
			continue
		}
		if back, ok := decompose(got); !ok || !slices.Equal(back, tt.parts) {
			t.Errorf("decompose(%q) = %q, %v; want %q", got, back, ok, tt.parts)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("Compose(%q) and Compose(%q) both give %q", tt.parts, other, got)
		}
		seen[got] = tt.parts
	}
}

// FuzzCompose checks that Compose gives equal keys only for equal tuples
// of parts: each input string is split into parts on a byte the fuzzer
// chooses. It also checks that the lock keys (after lockdriver.NormalizeKey)
// are equal only for tuples whose parts are canonically equivalent.
func FuzzCompose(f *testing.F) {
	f.Add("a:b|c", "a|b:c", byte('|'))
	f.Add(`a\|:b`, `a\:|b`, byte('|'))
	f.Add(`a\\|b`, `a\|\b`, byte('|'))
	f.Add("x:y:z", "x:y:z", byte(':'))
	f.Add("cafe\u0301|x", "café|x", byte('|'))
	f.Add("t\x00u", "t:u", byte(0))
	f.Fuzz(func(t *testing.T, a, b string, sep byte) {
		pa, pb := strings.Split(a, string(sep)), strings.Split(b, string(sep))
		ka, errA := compose(pa...)
		kb, errB := compose(pb...)
		if wantErr := slices.Contains(pa, ""); (errA != nil) != wantErr {
			t.Fatalf("Compose(%q) = %q, %v; want an error only for an empty part", pa, ka, errA)
		}
		if errA != nil || errB != nil {
			return
		}
		if (ka == kb) != slices.Equal(pa, pb) {
			t.Fatalf("Compose(%q) = %q, Compose(%q) = %q", pa, ka, pb, kb)
		}
		if back, ok := decompose(ka); !ok || !slices.Equal(back, pa) {
			t.Fatalf("Compose(%q) = %q decodes to %q, %v", pa, ka, back, ok)
		}
		na, errA := lockdriver.NormalizeKey(ka)
		nb, errB := lockdriver.NormalizeKey(kb)
		if errA != nil || errB != nil || na != nb {
			return
		}
		equiv := len(pa) == len(pb)
		for i := 0; equiv && i < len(pa); i++ {
			equiv = norm.NFC.String(pa[i]) == norm.NFC.String(pb[i])
		}
		if !equiv {
			t.Fatalf("lock keys of %q and %q are both %q", pa, pb, na)
		}
	})
}
