package lockdriver_test

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/rangetable"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
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
		got, err := lockdriver.NormalizeKey(key)
		if err != nil {
			if code := lock.CodeOf(err); code != lock.CodeInvalidArgument {
				t.Fatalf("NormalizeKey(%q) error code = %q, want InvalidArgument", key, code)
			}
			if got != "" {
				t.Fatalf("NormalizeKey(%q) = %q with an error, want \"\"", key, got)
			}
			n := norm.NFC.String(key)
			streamSafeChanged := strings.Count(n, "\u034f") != strings.Count(key, "\u034f")
			if key != "" && utf8.ValidString(key) && len(n) <= lockdriver.MaxKeyBytes && !streamSafeChanged && assignedIn(key) {
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
		if len(got) < 1 || len(got) > lockdriver.MaxKeyBytes {
			t.Fatalf("NormalizeKey(%q) = %d bytes, want 1..%d", key, len(got), lockdriver.MaxKeyBytes)
		}
		again, err := lockdriver.NormalizeKey(got)
		if err != nil || again != got {
			t.Fatalf("NormalizeKey(%q) = %q, %v; want it unchanged (idempotent)", got, again, err)
		}
	})
}

func FuzzValidateLockID(f *testing.F) {
	for _, s := range []string{"", "Ab3kX9_-zz11AAbbCCdd0Q", "Ab3kX9_-zz11AAbbCCdd0Q=", "Ab3kX9+/zz11AAbbCCdd0Q"} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)
	f.Fuzz(func(t *testing.T, id string) {
		err := lockdriver.ValidateLockID(id)
		if want := re.MatchString(id); (err == nil) != want {
			t.Fatalf("ValidateLockID(%q) = %v, want accepted = %v", id, err, want)
		}
		if err != nil && lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Fatalf("ValidateLockID(%q) code = %q, want InvalidArgument", id, lock.CodeOf(err))
		}
	})
}
