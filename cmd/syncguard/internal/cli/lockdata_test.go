package cli

import (
	"testing"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

// FuzzDecodeLock checks that decodeLock never panics, and that what it
// accepts is lock data: a well-formed lock id and fence.
func FuzzDecodeLock(f *testing.F) {
	f.Add(`{"lockId":"AAAAAAAAAAAAAAAAAAAAAA","expiresAtMs":1700000030000,"acquiredAtMs":1700000000000,"key":"invoice:42","fence":"000000000000007"}`)
	f.Add(`{"lockId":"AAAAAAAAAAAAAAAAAAAAAA","expiresAtMs":1.7e12,"acquiredAtMs":1.7e12,"key":"","fence":"000000000000001"}`)
	f.Add(`{"lockId":"short","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":"1"}`)
	f.Add(`syncguard:invoice:42`)
	f.Add("\x00-1:nonce")
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, raw string) {
		d, err := decodeLock(raw)
		if err != nil {
			return
		}
		if wire.ValidateLockID(d.lockID) != nil {
			t.Errorf("decodeLock(%q) accepted the lock id %q", raw, d.lockID)
		}
		if _, err := lock.ParseFence(string(d.fence)); err != nil {
			t.Errorf("decodeLock(%q) accepted the fence %q", raw, d.fence)
		}
	})
}

func TestDecodeLock(t *testing.T) {
	for _, tc := range []struct {
		desc, raw string
		ok        bool
	}{
		{"lock data", `{"lockId":"AAAAAAAAAAAAAAAAAAAAAA","expiresAtMs":1700000030000,"acquiredAtMs":1700000000000,"key":"k","fence":"000000000000007"}`, true},
		{"times as cjson may write them", `{"lockId":"AAAAAAAAAAAAAAAAAAAAAA","expiresAtMs":1.70000003e+12,"acquiredAtMs":1.7e+12,"key":"k","fence":"000000000000007"}`, true},
		{"an index value", `syncguard:k`, false},
		{"a tombstone", "\x001:abc", false},
		{"no fence", `{"lockId":"AAAAAAAAAAAAAAAAAAAAAA","expiresAtMs":1,"acquiredAtMs":1,"key":"k"}`, false},
		{"short fence", `{"lockId":"AAAAAAAAAAAAAAAAAAAAAA","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":"7"}`, false},
		{"fractional time", `{"lockId":"AAAAAAAAAAAAAAAAAAAAAA","expiresAtMs":1.5,"acquiredAtMs":1,"key":"k","fence":"000000000000007"}`, false},
		{"bad lock id", `{"lockId":"A","expiresAtMs":1,"acquiredAtMs":1,"key":"k","fence":"000000000000007"}`, false},
	} {
		if _, err := decodeLock(tc.raw); (err == nil) != tc.ok {
			t.Errorf("%s: decodeLock(%q) error %v, want ok %v", tc.desc, tc.raw, err, tc.ok)
		}
	}
}
