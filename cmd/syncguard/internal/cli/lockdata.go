package cli

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

// lockData is the JSON at a lock key, syncguard's wire format:
// {lockId, expiresAtMs, acquiredAtMs, key, fence}.
type lockData struct {
	lockID       string
	expiresAtMs  int64
	acquiredAtMs int64
	key          string
	fence        lock.Fence
}

var errNotLockData = errors.New("not syncguard lock data")

// decodeLock parses lock JSON, every field present with its type, as the
// backend does; anything else is errNotLockData.
func decodeLock(raw string) (lockData, error) {
	var w struct {
		LockID       *string  `json:"lockId"`
		ExpiresAtMs  *float64 `json:"expiresAtMs"`
		AcquiredAtMs *float64 `json:"acquiredAtMs"`
		Key          *string  `json:"key"`
		Fence        *string  `json:"fence"`
	}
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal([]byte(raw), &w) != nil {
		return lockData{}, errNotLockData
	}
	if w.LockID == nil || w.ExpiresAtMs == nil || w.AcquiredAtMs == nil || w.Key == nil || w.Fence == nil ||
		wire.ValidateLockID(*w.LockID) != nil {
		return lockData{}, errNotLockData
	}
	fence, err := lock.ParseFence(*w.Fence)
	if err != nil {
		return lockData{}, errNotLockData
	}
	exp, ok1 := wholeMs(*w.ExpiresAtMs)
	acq, ok2 := wholeMs(*w.AcquiredAtMs)
	if !ok1 || !ok2 {
		return lockData{}, errNotLockData
	}
	return lockData{lockID: *w.LockID, expiresAtMs: exp, acquiredAtMs: acq, key: *w.Key, fence: fence}, nil
}

// holder is the lock id as operators see it: lock.HashKey of it, as
// lock.Info.IDHash (the id itself releases the lock, so it is never shown).
func (d lockData) holder() string { return lock.HashKey(d.lockID) }

func (d lockData) live(nowMs int64) bool { return wire.IsLive(d.expiresAtMs, nowMs) }

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// wholeMs converts a JSON number of milliseconds when it is a whole number
// within ±2^53 (Lua's cjson may write one as 1.7e+12).
func wholeMs(f float64) (int64, bool) {
	const limit = 1 << 53
	if f != f || f < -limit || f > limit || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}
