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
	// What is not lock data is an Internal error (internal/wire's tests
	// cover every way it can fail to be).
	for _, raw := range []string{"", "[]", `{"lockId":"short","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":"000000000000007"}`} {
		if _, err := decodeLockData(raw); lock.CodeOf(err) != lock.CodeInternal {
			t.Errorf("decodeLockData(%q): err = %v, want Internal", raw, err)
		}
	}
}
