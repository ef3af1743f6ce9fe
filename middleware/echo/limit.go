package echolock

import "github.com/syncguard-go/syncguard/middleware/internal/guard"

// ErrLimitReached is matched (errors.Is) by the error a BusyHandler
// receives when every slot of the key's concurrency limit (Config.Limit)
// is taken; the error matches lock.ErrLocked as well.
var ErrLimitReached = guard.ErrLimitReached
