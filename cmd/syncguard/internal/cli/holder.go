package cli

import (
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// holderOf is a lock id as operators see it: lock.HashKey of it, as
// lock.Info.IDHash (the id itself releases the lock, so it is never shown).
func holderOf(lockID string) string { return lock.HashKey(lockID) }

func msTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
