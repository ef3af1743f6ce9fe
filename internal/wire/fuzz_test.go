package wire_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

func FuzzNormalizeKey(f *testing.F) {
	for _, s := range []string{"", "resource:123", "cafe\u0301", " key ", "\xff", strings.Repeat("é", 256),
		"a\u0897\u0316", "\U00016D67\U00016D67", "\ue000", "k\uffff"} {
		f.Add(s)
	}
	// assignedIn is the oracle for "every code point is assigned in the
	// normaliser's Unicode version": the standard library's Cn table when
	// it comes from the same version, x/text's table otherwise.
	assignedIn := func(s string) bool {
		for _, r := range s {
			if unicode.Version == norm.Version && unicode.Is(unicode.Cn, r) {
				return false
			}
			if !unicode.Is(rangetable.Assigned(norm.Version), r) {
				return false
			}
		}
		return true
	}
	f.Fuzz(func(t *testing.T, key string) {
		got, err := wire.NormalizeKey(key)
		if err != nil {
			if code := lock.CodeOf(err); code != lock.CodeInvalidArgument {
				t.Fatalf("NormalizeKey(%q) error code = %q, want InvalidArgument", key, code)
			}
			if got != "" {
				t.Fatalf("NormalizeKey(%q) = %q with an error, want \"\"", key, got)
			}
			n := norm.NFC.String(key)
			streamSafeChanged := strings.Count(n, "\u034f") != strings.Count(key, "\u034f")
			if key != "" && utf8.ValidString(key) && len(n) <= lock.MaxKeyBytes && !streamSafeChanged && assignedIn(key) {
				t.Fatalf("NormalizeKey(%q) rejected a valid key: %v", key, err)
			}
			return
		}
		if !utf8.ValidString(got) {
			t.Fatalf("NormalizeKey(%q) = %q, not valid UTF-8", key, got)
		}
		// Only keys of assigned code points are accepted: their NFC is
		// the same in every later Unicode version (JavaScript's too).
		if !assignedIn(key) || !assignedIn(got) {
			t.Fatalf("NormalizeKey(%+q) = %+q: accepted a code point not assigned in Unicode %s", key, got, norm.Version)
		}
		if !norm.NFC.IsNormalString(got) {
			t.Fatalf("NormalizeKey(%q) = %q, not NFC", key, got)
		}
		if len(got) < 1 || len(got) > lock.MaxKeyBytes {
			t.Fatalf("NormalizeKey(%q) = %d bytes, want 1..%d", key, len(got), lock.MaxKeyBytes)
		}
		again, err := wire.NormalizeKey(got)
		if err != nil || again != got {
			t.Fatalf("NormalizeKey(%q) = %q, %v; want it unchanged (idempotent)", got, again, err)
		}
	})
}

func FuzzMakeStorageKey(f *testing.F) {
	f.Add("syncguard", "resource:123", "resource:124", 1000, 26)
	f.Add("p", strings.Repeat("x", 600), strings.Repeat("x", 601), 500, 0)
	f.Add("p::", "k", "k:", 24, 0)
	f.Fuzz(func(t *testing.T, prefix, key, key2 string, limit, reserve int) {
		// Callers pass small constants; outside this range int arithmetic
		// on limit and reserve could overflow.
		if limit < 0 || limit > 1<<20 || reserve < 0 || reserve > 1<<20 {
			return
		}
		got, err := wire.MakeStorageKey(prefix, key, limit, reserve)
		again, err2 := wire.MakeStorageKey(prefix, key, limit, reserve)
		if got != again || (err == nil) != (err2 == nil) {
			t.Fatalf("not deterministic: %q, %v then %q, %v", got, err, again, err2)
		}
		p := strings.TrimRight(prefix, ":") + ":"
		full := p + key
		hashedLen := len(p) + 22
		if err != nil {
			if code := lock.CodeOf(err); code != lock.CodeInvalidArgument {
				t.Fatalf("error code = %q, want InvalidArgument", code)
			}
			if hashedLen+reserve <= limit {
				t.Fatalf("MakeStorageKey(%q, %q, %d, %d) failed, but the hashed form fits: %v", prefix, key, limit, reserve, err)
			}
			return
		}
		if len(got)+reserve > limit {
			t.Fatalf("MakeStorageKey(%q, %q, %d, %d) = %q: %d bytes, want <= %d", prefix, key, limit, reserve, got, len(got), limit-reserve)
		}
		hashed := got != full
		switch {
		case !hashed && len(full)+reserve > limit:
			t.Fatalf("kept %q although it does not fit", got)
		case hashed && len(full)+reserve <= limit:
			t.Fatalf("hashed %q to %q although it fits", full, got)
		case hashed && (len(got) != hashedLen || !strings.HasPrefix(got, p) || !lockIDRe.MatchString(got[len(p):])):
			t.Fatalf("hashed form %q, want %q + 22 base64url characters", got, p)
		}
		got2, err := wire.MakeStorageKey(prefix, key2, limit, reserve)
		if err != nil || key == key2 {
			return
		}
		if !hashed && got2 == p+key2 && got == got2 {
			t.Fatalf("distinct keys %q and %q both map to %q", key, key2, got)
		}
	})
}

func FuzzValidateLockID(f *testing.F) {
	for _, s := range []string{"", "Ab3kX9_-zz11AAbbCCdd0Q", "Ab3kX9_-zz11AAbbCCdd0Q=", "Ab3kX9+/zz11AAbbCCdd0Q"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)
	f.Fuzz(func(t *testing.T, id string) {
		err := wire.ValidateLockID(id)
		if want := re.MatchString(id); (err == nil) != want {
			t.Fatalf("ValidateLockID(%q) = %v, want accepted = %v", id, err, want)
		}
		if err != nil && lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Fatalf("ValidateLockID(%q) code = %q, want InvalidArgument", id, lock.CodeOf(err))
		}
	})
}
