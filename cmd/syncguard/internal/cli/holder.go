package cli

import (
	"time"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// holderOf is a lock id as operators see it: lockdriver.HashKey of it, as
// lock.Info.IDHash (the id itself releases the lock, so it is never shown).
func holderOf(lockID string) string { return lockdriver.HashKey(lockID) }

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
