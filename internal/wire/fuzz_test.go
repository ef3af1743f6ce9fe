package wire_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

// lockIDRe matches the 22 base64url characters of a hashed storage key.
var lockIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

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
