package contract

import (
	"context"
	"time"
)

// The events of a wait that lock/election's candidates run themselves
// (lock.OpWait around the campaign, lock.OpGranted for a hand-off), and
// the backend a lock.WithHooks backend wraps: lock sets them in its init,
// and package lock/internal/event calls them with their arguments typed.
// b is a lock.Backend, l a lock.Lease.
var (
	Wait    func(ctx context.Context, b any, key string, ttl time.Duration, run func(ctx context.Context) (l any, err error)) (any, error)
	Granted func(ctx context.Context, b, l any)
	Wrapped func(b any) any
)
