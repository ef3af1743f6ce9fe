package guard

import (
	"errors"
	"fmt"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// ErrLimitReached reports that a request found every slot of its key's
// concurrency limit taken (Config.Limit). Serve returns it joined with
// the lock error (which matches lock.ErrLocked and carries the
// *lock.LockedError), so errors.Is matches both; BusyProblem answers it
// 429 instead of 409.
var ErrLimitReached = errors.New("syncguard: the concurrency limit of the key is reached")

// checkLimit validates the limit part of c for backend b: Limit 0 is no
// limit; otherwise b must be a lock.IDBackend and replay must be off (n
// requests running at once under one key cannot have one response to
// replay). The range of Limit is checked by lockdriver.ValidateOptions.
func checkLimit(b lock.Backend, c Config) error {
	if c.Limit == 0 {
		return nil
	}
	if c.Replay != nil {
		return lockdriver.InvalidArgument("config",
			"a concurrency limit cannot be combined with replay mode: replay is for requests that run once per key, a limit lets several run at once")
	}
	return lockdriver.ValidateLimit(b, c.Limit)
}

// limited marks err, a contention error of a Guard with a limit, as
// ErrLimitReached.
func limited(err error) error { return fmt.Errorf("%w: %w", ErrLimitReached, err) }
