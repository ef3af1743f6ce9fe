package wire

import "strings"

// DecodeGrant reads the fence and expiresAtMs of the lock data an acquire
// script answers a grant with, as the scripts read them. The fence is a
// substring of data. The rest of the data is not checked.
func DecodeGrant(data string) (fence string, expiresAtMs int64, ok bool) {
	i := strings.Index(data, `"expiresAtMs":`)
	j := strings.Index(data, `"fence":"`)
	if i < 0 || j < 0 {
		return "", 0, false
	}
	i += len(`"expiresAtMs":`)
	n := 0
	for ; i+n < len(data) && n < 18 && data[i+n] >= '0' && data[i+n] <= '9'; n++ {
		expiresAtMs = expiresAtMs*10 + int64(data[i+n]-'0')
	}
	j += len(`"fence":"`)
	k := strings.IndexByte(data[j:], '"')
	if n == 0 || k <= 0 {
		return "", 0, false
	}
	return data[j : j+k], expiresAtMs, true
}
