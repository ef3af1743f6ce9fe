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

// mayHaveRun reports whether a call that failed with err (mapped) may have
// run on the server: it timed out or lost its connection. A reply from
// Redis (an error reply: OOM, LOADING, READONLY, ...) means the script did
// not take the lock, and an acquisition that ReplicaAck gave up has
// released it already. It decides whether an acquisition needs a clean-up;
// transient decides whether a clean-up tries again.
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
// is worth another try: the code mapError gives err is transient
// (lock.Code.Transient, the one notion of "try again" of this module). That
// is an unreachable server or a timeout, which may or may not have run the
// call, and the error replies of a server that is up but not serving yet,
// which ran nothing: LOADING while a restart reads its data, BUSY, MASTERDOWN,
// TRYAGAIN, CLUSTERDOWN, READONLY during a failover (classifyReply).
func transient(ctx context.Context, err error) bool {
	return lock.CodeOf(mapError(ctx, "release", err)).Transient()
}
