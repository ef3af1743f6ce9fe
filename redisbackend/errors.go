package redisbackend

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend/internal/errmap"
)

// The error prefixes of the scripts (errmap).
const (
	corruptPrefix = errmap.CorruptPrefix
	kindPrefix    = errmap.KindPrefix
)

// mapError turns a go-redis error into a *lock.Error (errmap.Map).
func mapError(ctx context.Context, op string, err error) error { return errmap.Map(ctx, op, err) }

// notHeld maps the status a release or extend script returns for a lease
// it did not act on (0 owned by another lease, -1 not found, -2 expired)
// to a *lockdriver.NotHeldError.
func notHeld(op string, code int64) error {
	switch code {
	case 0:
		return &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotOwner}
	case -1:
		return &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}
	case -2:
		return &lockdriver.NotHeldError{Reason: lockdriver.NotHeldExpired}
	}
	return internal(op, "unexpected status "+strconv.FormatInt(code, 10)+" from the script")
}

// mayHaveRun reports whether a call that failed with the mapped err may
// have run on the server: it timed out or lost its connection. An error
// reply means the script took nothing. It decides whether an acquisition
// needs a clean-up.
func mayHaveRun(err error) bool {
	var reply redis.Error
	if errors.As(err, &reply) || errors.Is(err, errNotAcked) {
		return false
	}
	switch lock.CodeOf(err) {
	case lock.CodeNetworkTimeout, lock.CodeServiceUnavailable:
		return true
	}
	return false
}

// transient reports whether a clean-up call that failed with err under ctx
// is worth another try: lock.Code.Transient of mapError's code. That covers
// an unreachable server, a timeout, and a server not serving yet, such as
// LOADING, BUSY or READONLY during a failover.
func transient(ctx context.Context, err error) bool {
	return lock.CodeOf(mapError(ctx, "release", err)).Transient()
}
