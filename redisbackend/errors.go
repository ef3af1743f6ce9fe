package redisbackend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

// corruptPrefix starts the error our scripts raise for a lock key holding
// something other than syncguard lock data.
const corruptPrefix = "SYNCGUARD_CORRUPT"

// kindPrefix starts the error our scripts return for a key used as a lock
// and as a limit at once (lock.ErrKindMismatch).
const kindPrefix = "SYNCGUARD_KIND"

// mapError turns a go-redis error into a *lock.Error with its code. It
// classifies by Go error types and go-redis's predicates, then by the
// first word of the Redis error reply.
func mapError(ctx context.Context, op string, err error) error {
	if le := (*lock.Error)(nil); errors.As(err, &le) {
		return err // already mapped (e.g. by runAcquire)
	}
	if redis.HasErrorPrefix(err, kindPrefix) {
		return &lock.Error{Code: lock.CodeInvalidArgument, Op: op, Err: lock.ErrKindMismatch}
	}
	code, msg := classify(ctx, err)
	switch {
	case code == lock.CodeAborted && !errors.Is(err, ctx.Err()):
		err = ctx.Err()
	case code == lock.CodeNetworkTimeout && atDeadline(ctx) && !errors.Is(err, context.DeadlineExceeded):
		// With ContextTimeoutEnabled, go-redis's i/o timeout can come a
		// moment before ctx reports its deadline.
		msg = "no reply before the context's deadline; the command may have run"
		err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return &lock.Error{Code: code, Op: op, Msg: msg, Err: err}
}

// atDeadline reports whether ctx has a deadline that has passed, or is
// within a millisecond.
func atDeadline(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < time.Millisecond
}

func classify(ctx context.Context, err error) (lock.Code, string) {
	if errors.Is(err, transport.ErrAbandoned) {
		return lock.CodeNetworkTimeout, "no reply before the context ended; the command may have run"
	}
	if ctx.Err() != nil {
		return lock.CodeAborted, "context done"
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return classifyReply(err, rerr.Error())
	}
	var nerr net.Error
	switch {
	case errors.Is(err, redis.ErrPoolTimeout):
		return lock.CodeNetworkTimeout, "timed out waiting for a connection from the pool"
	case errors.As(err, &nerr) && nerr.Timeout():
		return lock.CodeNetworkTimeout, "redis did not answer in time"
	case errors.Is(err, context.DeadlineExceeded):
		return lock.CodeNetworkTimeout, "redis did not answer in time"
	case errors.Is(err, redis.ErrClosed),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE),
		errors.As(err, new(*net.OpError)),
		errors.As(err, new(*net.DNSError)):
		return lock.CodeServiceUnavailable, "redis is unreachable"
	}
	return lock.CodeInternal, "unexpected error from redis"
}

func classifyReply(err error, reply string) (lock.Code, string) {
	switch {
	case strings.HasPrefix(reply, corruptPrefix):
		return lock.CodeInternal, "corrupt lock data"
	case redis.IsAuthError(err), redis.IsPermissionError(err),
		redis.HasErrorPrefix(err, "WRONGPASS"):
		return lock.CodeAuthFailed, "redis rejected the credentials"
	case redis.IsLoadingError(err), redis.IsReadOnlyError(err),
		redis.IsMasterDownError(err), redis.IsClusterDownError(err),
		redis.IsTryAgainError(err), redis.IsNoReplicasError(err),
		redis.IsMaxClientsError(err), redis.HasErrorPrefix(err, "MISCONF"),
		redis.HasErrorPrefix(err, "BUSY"):
		return lock.CodeServiceUnavailable, "redis cannot serve the request now"
	case redis.IsOOMError(err):
		return lock.CodeServiceUnavailable, "redis is out of memory (maxmemory reached); nothing was written"
	case strings.Contains(reply, "attempted to access a non local key"):
		// Redis Cluster resharding moved the lock key away from its index
		// key (a script reads the lock key the index names); nothing ran.
		return lock.CodeServiceUnavailable, "the lock's keys are split across cluster nodes by resharding; retry"
	case redis.HasErrorPrefix(err, "WRONGTYPE"), redis.HasErrorPrefix(err, "SYNTAX"),
		redis.HasErrorPrefix(err, "INVALID"):
		return lock.CodeInvalidArgument, "redis rejected the command"
	}
	return lock.CodeInternal, "redis returned an error"
}

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
