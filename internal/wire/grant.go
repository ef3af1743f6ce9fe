package wire

import (
	"strings"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// The members of the scripts' own lock data (prelude.lua's lockFormat) at
// fixed places: the lock id first, then the expiry; the fence, of 15
// digits, last.
const (
	grantHead  = `{"lockId":"`
	grantExp   = `","expiresAtMs":`
	grantFence = `,"fence":"`
	fenceLen   = 15
	grantExpAt = len(grantHead) + lockdriver.LockIDLen + len(grantExp)
)

// DecodeGrant reads the fence and expiresAtMs of the lock data an acquire
// script answers a grant with, as the scripts read them. The fence is a
// substring of data. The rest of the data is not checked.
func DecodeGrant(data string) (fence string, expiresAtMs int64, ok bool) {
	// The scripts' own layout is read in place; any other order is searched.
	d := strings.TrimSuffix(data, " ") // a queued lease's mark
	if f := len(d) - 2 - fenceLen; f > grantExpAt+len(grantFence) && strings.HasPrefix(d, grantHead) &&
		d[grantExpAt-len(grantExp):grantExpAt] == grantExp && d[f-len(grantFence):f] == grantFence && d[len(d)-2:] == `"}` {
		if exp, n := leadingMs(d[grantExpAt:]); n > 0 && d[grantExpAt+n] == ',' {
			return d[f : f+fenceLen], exp, true
		}
	}
	i := strings.Index(data, `"expiresAtMs":`)
	j := strings.Index(data, `"fence":"`)
	if i < 0 || j < 0 {
		return "", 0, false
	}
	i += len(`"expiresAtMs":`)
	expiresAtMs, n := leadingMs(data[i:])
	j += len(`"fence":"`)
	k := strings.IndexByte(data[j:], '"')
	if n == 0 || k <= 0 {
		return "", 0, false
	}
	return data[j : j+k], expiresAtMs, true
}

// leadingMs reads the digits s starts with, at most 18, and how many.
func leadingMs(s string) (ms int64, n int) {
	for ; n < len(s) && n < 18 && s[n] >= '0' && s[n] <= '9'; n++ {
		ms = ms*10 + int64(s[n]-'0')
	}
	return ms, n
}
