package cli

import "testing"

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
