package cli

import (
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// lockData is the JSON at a lock key (wire.LockData), with what the
// command shows of it.
type lockData struct{ wire.LockData }

var errNotLockData = wire.ErrNotLockData

// decodeLock parses lock JSON as the backend does (wire.DecodeLockData);
// anything else is errNotLockData.
func decodeLock(raw string) (lockData, error) {
	d, err := wire.DecodeLockData(raw)
	if err != nil {
		return lockData{}, errNotLockData
	}
	return lockData{d}, nil
}

// holder is the lock id as operators see it: lockdriver.HashKey of it, as
// lock.Info.IDHash (the id itself releases the lock, so it is never shown).
func (d lockData) holder() string { return lockdriver.HashKey(d.LockID) }

func (d lockData) live(nowMs int64) bool { return wire.IsLive(d.ExpiresAtMs, nowMs) }

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
