package contract

import (
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// HashKey is lockdriver.HashKey: syncguard's 96-bit sanitising hash, the
// TypeScript library's hashKey.
func HashKey(s string) string {
	s = norm.NFC.String(s) // s itself when already NFC (every ASCII string)
	var h1, h2, h3 int32
	add := func(c int32) {
		h1 = h1*31 + c
		h2 = h2*127 + c*3
		h3 = h3*2047 + c*7
	}
	for _, r := range s {
		if r >= 0x10000 {
			// JavaScript strings are UTF-16: hash the surrogate pair.
			hi, lo := utf16.EncodeRune(r)
			add(int32(hi))
			add(int32(lo))
			continue
		}
		add(int32(r))
	}
	var out [24]byte
	putHex(out[0:8], uint32(h1))
	putHex(out[8:16], uint32(h2))
	putHex(out[16:24], uint32(h3))
	return string(out[:])
}

func putHex(dst []byte, v uint32) {
	const digits = "0123456789abcdef"
	for i := 7; i >= 0; i-- {
		dst[i] = digits[v&0xf]
		v >>= 4
	}
}
