package wire_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// TestDecodeLockData: lock data decodes, cjson's exponent form of a time
// included; anything else is ErrNotLockData.
func TestDecodeLockData(t *testing.T) {
	const good = `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1795344179534,"acquiredAtMs":1795344174534,"key":"resource:1","fence":"000000000000007"}`
	d, err := wire.DecodeLockData(good)
	want := wire.LockData{LockID: "AbCdEfGhIjKlMnOpQrStUv", ExpiresAtMs: 1795344179534, AcquiredAtMs: 1795344174534, Key: "resource:1", Fence: "000000000000007"}
	if err != nil || d != want {
		t.Errorf("DecodeLockData = %+v, %v; want %+v", d, err, want)
	}
	if d, err := wire.DecodeLockData(strings.Replace(good, "1795344179534", "1.795344179534e+12", 1)); err != nil || d.ExpiresAtMs != 1795344179534 {
		t.Errorf("exponent form: %+v, %v", d, err)
	}
	for _, tc := range []struct{ desc, raw string }{
		{"empty", ""},
		{"an index value", "syncguard:k"},
		{"a tombstone", "\x001:abc"},
		{"not JSON", "{"},
		{"array", "[]"},
		{"missing fence", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1,"acquiredAtMs":1,"key":"k"}`},
		{"numeric fence", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":7}`},
		{"short fence", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":"7"}`},
		{"bad id", `{"lockId":"short","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":"000000000000007"}`},
		{"fractional time", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1.5,"acquiredAtMs":1,"key":"k","fence":"000000000000007"}`},
		{"huge time", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1e300,"acquiredAtMs":1,"key":"k","fence":"000000000000007"}`},
		{"string time", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":"1","acquiredAtMs":1,"key":"k","fence":"000000000000007"}`},
	} {
		if _, err := wire.DecodeLockData(tc.raw); !errors.Is(err, wire.ErrNotLockData) {
			t.Errorf("%s: err = %v, want ErrNotLockData", tc.desc, err)
		}
	}
}

// FuzzDecodeLockData feeds arbitrary bytes as the value read back from a
// lock key (redisbackend and the syncguard command decode it the same
// way): never a panic; either ErrNotLockData, whose message never echoes
// the value, or data that satisfies every invariant.
func FuzzDecodeLockData(f *testing.F) {
	f.Add(`{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1795344179534,"acquiredAtMs":1795344174534,"key":"resource:1","fence":"000000000000007"}`)
	f.Add(`{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1e308,"acquiredAtMs":-1e308,"key":"","fence":"999999999999999"}`)
	f.Add(`{"lockId":"AAAAAAAAAAAAAAAAAAAAAA","expiresAtMs":1.7e12,"acquiredAtMs":1.7e12,"key":"","fence":"000000000000001"}`)
	f.Add(`{"lockId":null}`)
	f.Add("\xff\xfe")
	f.Add("\x00-1:nonce")
	f.Add(`syncguard:invoice:42`)
	f.Fuzz(func(t *testing.T, raw string) {
		d, err := wire.DecodeLockData(raw)
		if err != nil {
			if !errors.Is(err, wire.ErrNotLockData) {
				t.Fatalf("err = %v, want ErrNotLockData", err)
			}
			if strings.Contains(err.Error(), raw) && len(raw) > 8 {
				t.Fatalf("error echoes the stored value: %v", err)
			}
			return
		}
		if !json.Valid([]byte(raw)) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		if lockdriver.ValidateLockID(d.LockID) != nil {
			t.Fatalf("accepted lock id %q", d.LockID)
		}
		if _, err := lockdriver.ParseFence(string(d.Fence)); err != nil {
			t.Fatalf("accepted fence %q", d.Fence)
		}
		for _, ms := range []int64{d.ExpiresAtMs, d.AcquiredAtMs} {
			if ms > 1<<53 || ms < -(1<<53) {
				t.Fatalf("accepted time %d", ms)
			}
		}
	})
}

// TestJSONText: the text the acquire script puts between the quotes of
// the lock data's "key" reads back as the key, whatever its bytes, and a
// key with nothing to escape is written as is (redisbackend's
// TestJSONTextIsCJSON reads it with Redis's cjson too).
func TestJSONText(t *testing.T) {
	keys := []string{"", "plain:key", `quote"back\slash/`, "caf\u00e9 \U0001F512 \u2028\u2029", `\u0041`}
	for c := 0; c < 0x80; c++ {
		keys = append(keys, "a"+string(rune(c))+"b")
	}
	for _, k := range keys {
		var back string
		if err := json.Unmarshal([]byte(`"`+wire.JSONText(k)+`"`), &back); err != nil || back != k {
			t.Errorf("JSONText(%q) = %q reads back as %q, %v", k, wire.JSONText(k), back, err)
		}
	}
	if s := "no:escapes/here"; wire.JSONText(s) != s {
		t.Errorf("JSONText(%q) = %q", s, wire.JSONText(s))
	}
}

// TestLockDataElection: lock data naming its owner is an election's term,
// whose owner the syncguard command shows; without one, or with an owner
// that is not a string, it is a lock.
func TestLockDataElection(t *testing.T) {
	const good = `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1795344179534,"acquiredAtMs":1795344174534,"key":"resource:1","fence":"000000000000007"}`
	for _, tc := range []struct {
		desc, raw, owner string
	}{
		{"a lock", good, ""},
		{"a term", strings.TrimSuffix(good, "}") + `,"owner":"pod-a \u00e9"}`, "pod-a \u00e9"},
		{"a foreign owner member", strings.TrimSuffix(good, "}") + `,"owner":7}`, ""},
	} {
		d, err := wire.DecodeLockData(tc.raw)
		if err != nil || d.Owner != tc.owner || d.Election() != (tc.owner != "") || d.Fence != "000000000000007" {
			t.Errorf("%s: %+v, %v; want owner %q", tc.desc, d, err, tc.owner)
		}
	}
}
