package redisbackend

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

func TestDecodeLockData(t *testing.T) {
	const good = `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1795344179534,"acquiredAtMs":1795344174534,"key":"resource:1","fence":"000000000000007"}`
	d, err := decodeLockData(good)
	if err != nil {
		t.Fatal(err)
	}
	want := wire.LockData{LockID: "AbCdEfGhIjKlMnOpQrStUv", ExpiresAtMs: 1795344179534, AcquiredAtMs: 1795344174534, Key: "resource:1", Fence: "000000000000007"}
	if d != want {
		t.Errorf("decodeLockData = %+v, want %+v", d, want)
	}
	// cjson may print large numbers in exponent form; both decode the same.
	if d2, err := decodeLockData(strings.Replace(good, "1795344179534", "1.795344179534e+12", 1)); err != nil || d2.ExpiresAtMs != 1795344179534 {
		t.Errorf("exponent form: %+v, %v", d2, err)
	}
	for _, tc := range []struct{ desc, raw string }{
		{"empty", ""},
		{"not JSON", "{"},
		{"array", "[]"},
		{"null", "null"},
		{"missing fence", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1,"acquiredAtMs":1,"key":"k"}`},
		{"numeric fence", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":7}`},
		{"short fence", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":"7"}`},
		{"bad id", `{"lockId":"short","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":"000000000000007"}`},
		{"fractional time", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1.5,"acquiredAtMs":1,"key":"k","fence":"000000000000007"}`},
		{"huge time", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1e300,"acquiredAtMs":1,"key":"k","fence":"000000000000007"}`},
		{"string time", `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":"1","acquiredAtMs":1,"key":"k","fence":"000000000000007"}`},
	} {
		if _, err := decodeLockData(tc.raw); lock.CodeOf(err) != lock.CodeInternal {
			t.Errorf("%s: err = %v, want Internal", tc.desc, err)
		}
	}
}

// FuzzDecodeLockData feeds arbitrary bytes as the value read back from a
// lock key: never a panic; either a clear Internal error or data that
// satisfies every invariant.
func FuzzDecodeLockData(f *testing.F) {
	f.Add(`{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1795344179534,"acquiredAtMs":1795344174534,"key":"resource:1","fence":"000000000000007"}`)
	f.Add(`{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1e308,"acquiredAtMs":-1e308,"key":"","fence":"999999999999999"}`)
	f.Add(`{"lockId":null}`)
	f.Add("\xff\xfe")
	f.Fuzz(func(t *testing.T, raw string) {
		d, err := decodeLockData(raw)
		if err != nil {
			if lock.CodeOf(err) != lock.CodeInternal {
				t.Fatalf("err = %v, want Internal", err)
			}
			if strings.Contains(err.Error(), raw) && len(raw) > 8 {
				t.Fatalf("error echoes the stored value: %v", err)
			}
			return
		}
		if !json.Valid([]byte(raw)) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		if wire.ValidateLockID(d.LockID) != nil {
			t.Fatalf("accepted lock id %q", d.LockID)
		}
		if _, err := lock.ParseFence(string(d.Fence)); err != nil {
			t.Fatalf("accepted fence %q", d.Fence)
		}
		if d.ExpiresAtMs > 1<<53 || d.ExpiresAtMs < -(1<<53) {
			t.Fatalf("accepted expiry %d", d.ExpiresAtMs)
		}
	})
}
