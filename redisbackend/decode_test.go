package redisbackend

import (
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
