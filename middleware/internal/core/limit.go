package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
)

// limited marks err, a contention error of a Guard with a limit, as
// guard.ErrLimitReached.
func limited(err error) error { return fmt.Errorf("%w: %w", guard.ErrLimitReached, err) }

// Take takes one slot of the limit on key and keeps it until the TTL
// ends, so that at most Limit takes start per TTL: a rate limit. The
// error matches ErrLimitReached and lock.ErrLocked when every slot is
// taken; with FailOpen a backend failure is nil.
func (g *Guard) Take(ctx context.Context, key string) error {
	_, err := lock.Acquire(ctx, g.b, key, g.opts...)
	g.logDenied(ctx, key, err)
	switch {
	case err == nil, g.failOpen && failsOpen(err):
		return nil
	case errors.Is(err, lock.ErrLocked):
		return limited(err)
	}
	return err
}
