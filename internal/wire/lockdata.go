package wire

import (
	"encoding/json"
	"errors"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// LockData is the JSON stored at a lock key:
// {lockId, expiresAtMs, acquiredAtMs, key, fence}, and "owner" on the
// term of an election (lock/election), the leader's identity. Other
// members are ignored, as the TypeScript library's reader ignores them.
type LockData struct {
	LockID       string
	ExpiresAtMs  int64
	AcquiredAtMs int64
	Key          string
	Fence        lock.Fence
	Owner        string // "" when absent
}

// ErrNotLockData is the error of DecodeLockData for anything but lock
// data; the error it returns wraps it and says what was wrong.
var ErrNotLockData = errors.New("not syncguard lock data")

// notLockData is ErrNotLockData with the reason.
type notLockData string

func (e notLockData) Error() string { return "corrupt lock data: " + string(e) }
func (e notLockData) Unwrap() error { return ErrNotLockData }

// DecodeLockData parses lock JSON strictly: every field present with its
// type, a well-formed lock id and fence, integral millisecond times. Any
// other input gives an error matching ErrNotLockData that names the first
// thing wrong.
func DecodeLockData(raw string) (LockData, error) {
	var w struct {
		LockID       *string  `json:"lockId"`
		ExpiresAtMs  *float64 `json:"expiresAtMs"`
		AcquiredAtMs *float64 `json:"acquiredAtMs"`
		Key          *string  `json:"key"`
		Fence        *string  `json:"fence"`
		Owner        any      `json:"owner"`
	}
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal([]byte(raw), &w) != nil {
		return LockData{}, notLockData("not JSON of the expected shape")
	}
	if w.LockID == nil || w.ExpiresAtMs == nil || w.AcquiredAtMs == nil || w.Key == nil || w.Fence == nil {
		return LockData{}, notLockData("missing field")
	}
	if lockdriver.ValidateLockID(*w.LockID) != nil {
		return LockData{}, notLockData("malformed lockId")
	}
	fence, err := lockdriver.ParseFence(*w.Fence)
	if err != nil {
		return LockData{}, notLockData("malformed fence")
	}
	exp, ok1 := wholeMs(*w.ExpiresAtMs)
	acq, ok2 := wholeMs(*w.AcquiredAtMs)
	if !ok1 || !ok2 {
		return LockData{}, notLockData("times out of range")
	}
	owner, _ := w.Owner.(string) // another writer's member of that name is not an owner
	return LockData{LockID: *w.LockID, ExpiresAtMs: exp, AcquiredAtMs: acq, Key: *w.Key, Fence: fence, Owner: owner}, nil
}

// Live reports whether the lease is live at nowMs (IsLive).
func (d LockData) Live(nowMs int64) bool { return IsLive(d.ExpiresAtMs, nowMs) }

// wholeMs converts a JSON number of milliseconds when it is a whole number
// within ±2^53 (Lua's cjson may write one as 1.7e+12).
func wholeMs(f float64) (int64, bool) {
	const limit = 1 << 53
	if f != f || f < -limit || f > limit || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}

// Election reports whether the lock data is the term of a leader
// election: it names its owner.
func (d LockData) Election() bool { return d.Owner != "" }

// JSONText returns s as the text of a JSON string, without its quotes:
// '"', '\' and the control characters escaped, everything else as is
// (bytes of UTF-8 included, as cjson writes them). The acquire script puts
// the user key into the lock data with it (its lockFormat), so the script
// makes no cjson call; a key with nothing to escape, the usual one, is
// returned without allocating.
func JSONText(s string) string {
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
