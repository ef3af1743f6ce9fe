package redisbackend

import (
	"encoding/json"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

// lockData is the JSON stored at a lock key.
type lockData struct {
	LockID       string
	ExpiresAtMs  int64
	AcquiredAtMs int64
	Key          string
	Fence        lock.Fence
}

// decodeLockData parses lock JSON strictly: every field present with its
// type, a well-formed lock id and fence, integral millisecond times.
func decodeLockData(raw string) (lockData, error) {
	var w struct {
		LockID       *string  `json:"lockId"`
		ExpiresAtMs  *float64 `json:"expiresAtMs"`
		AcquiredAtMs *float64 `json:"acquiredAtMs"`
		Key          *string  `json:"key"`
		Fence        *string  `json:"fence"`
	}
	bad := func(what string) (lockData, error) {
		return lockData{}, internal("decode", "corrupt lock data: "+what)
	}
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		return bad("not JSON of the expected shape")
	}
	if w.LockID == nil || w.ExpiresAtMs == nil || w.AcquiredAtMs == nil || w.Key == nil || w.Fence == nil {
		return bad("missing field")
	}
	if wire.ValidateLockID(*w.LockID) != nil {
		return bad("malformed lockId")
	}
	fence, err := lock.ParseFence(*w.Fence)
	if err != nil {
		return bad("malformed fence")
	}
	exp, ok1 := msInt(*w.ExpiresAtMs)
	acq, ok2 := msInt(*w.AcquiredAtMs)
	if !ok1 || !ok2 {
		return bad("times out of range")
	}
	return lockData{LockID: *w.LockID, ExpiresAtMs: exp, AcquiredAtMs: acq, Key: *w.Key, Fence: fence}, nil
}

// msInt converts a JSON number of milliseconds to int64 when it is a
// whole number within ±2^53.
func msInt(f float64) (int64, bool) {
	const limit = 1 << 53
	if f != f || f < -limit || f > limit || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
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
