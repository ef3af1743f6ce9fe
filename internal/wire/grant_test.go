package wire

import "testing"

// TestDecodeGrant: the fence and expiry of a grant's lock data are read in
// any member order, with the queued mark after it, and data without them
// is refused.
func TestDecodeGrant(t *testing.T) {
	for _, tc := range []struct {
		data, fence string
		exp         int64
		ok          bool
	}{
		{`{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1764100000000,"acquiredAtMs":1,"key":"k","fence":"000000000000042"}`, "000000000000042", 1764100000000, true},
		{`{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1764100000000,"acquiredAtMs":1,"key":"k","fence":"000000000000042"} `, "000000000000042", 1764100000000, true},
		{`{"fence":"000000000000007","key":"a\"expiresAtMs\":5","expiresAtMs":99,"lockId":"x"}`, "000000000000007", 99, true},
		{`{"lockId":"x","fence":"000000000000001"}`, "", 0, false},
		{`{"lockId":"x","expiresAtMs":5}`, "", 0, false},
		{`{"expiresAtMs":x,"fence":"1"}`, "", 0, false},
		{`garbage`, "", 0, false},
		// The scripts' layout with a fence that is not 15 digits, and a
		// key whose text looks like the layout's tail.
		{`{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":17,"acquiredAtMs":1,"key":"k","fence":"1000000000000000"}`, "1000000000000000", 17, true},
		{`{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":17,"acquiredAtMs":1,"key":"k\",\"fence\":\"000000000000001\"}","fence":"000000000000002"}`, "000000000000002", 17, true},
		{`{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":x,"acquiredAtMs":1,"key":"k","fence":"000000000000002"}`, "", 0, false},
	} {
		fence, exp, ok := DecodeGrant(tc.data)
		if fence != tc.fence || exp != tc.exp || ok != tc.ok {
			t.Errorf("DecodeGrant(%s) = %q, %d, %v; want %q, %d, %v", tc.data, fence, exp, ok, tc.fence, tc.exp, tc.ok)
		}
	}
}

// BenchmarkDecodeGrant reads a grant of the scripts' own layout.
func BenchmarkDecodeGrant(b *testing.B) {
	const data = `{"lockId":"AbCdEfGhIjKlMnOpQrStUv","expiresAtMs":1764100000000,"acquiredAtMs":1764099990000,"key":"orders/12345","fence":"000000000000042"}`
	for b.Loop() {
		if _, _, ok := DecodeGrant(data); !ok {
			b.Fatal("not decoded")
		}
	}
}
