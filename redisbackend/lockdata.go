package redisbackend

import (
	"strings"

	"github.com/syncguard-go/syncguard/internal/wire"
)

// decodeLockData parses lock JSON strictly (wire.DecodeLockData); what is
// not lock data is an Internal error that says what was wrong.
func decodeLockData(raw string) (wire.LockData, error) {
	d, err := wire.DecodeLockData(raw)
	if err != nil {
		return d, internal("decode", err.Error())
	}
	return d, nil
}

// grantOf reads the fence and expiresAtMs of the lock data the acquire
// script answers a grant with (acquire.lua: data it wrote, or the live
// lease of the same lock id), as the scripts read them: '"expiresAtMs":'
// and '"fence":"' outside a JSON string are those members, wherever a
// writer put them (inside a string every '"' is escaped). The fence is a
// substring of data, not a copy.
func grantOf(data string) (fence string, exp int64, ok bool) {
	i := strings.Index(data, `"expiresAtMs":`)
	j := strings.Index(data, `"fence":"`)
	if i < 0 || j < 0 {
		return "", 0, false
	}
	i += len(`"expiresAtMs":`)
	n := 0
	for ; i+n < len(data) && n < 18 && data[i+n] >= '0' && data[i+n] <= '9'; n++ {
		exp = exp*10 + int64(data[i+n]-'0')
	}
	j += len(`"fence":"`)
	k := strings.IndexByte(data[j:], '"')
	if n == 0 || k <= 0 {
		return "", 0, false
	}
	return data[j : j+k], exp, true
}

// jsonText returns s as the text of a JSON string, without its quotes:
// '"', '\' and the control characters escaped, everything else as is
// (bytes of UTF-8 included, as cjson writes them). The acquire script puts
// the user key into the lock data with it (scripts/prelude.lua, lockFormat),
// so the script makes no cjson call; a key with nothing to escape, the
// usual one, is returned without allocating.
func jsonText(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] != '"' && s[i] != '\\' {
		i++
	}
	if i == len(s) {
		return s
	}
	const hex = "0123456789abcdef"
	b := make([]byte, 0, len(s)+8)
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return string(b)
}
