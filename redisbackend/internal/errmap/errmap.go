// Package errmap maps go-redis errors to *lock.Error values, once, for
// redisbackend and its operator package admin.
package errmap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

// CorruptPrefix starts the error the scripts raise for a lock key holding
// something other than syncguard lock data.
const CorruptPrefix = "SYNCGUARD_CORRUPT"

// KindPrefix starts the error the scripts return for a key used as a lock
// and as a limit at once (lock.ErrKindMismatch).
const KindPrefix = "SYNCGUARD_KIND"

// CheckCtx returns the error of a call op made with ctx: InvalidArgument
// for a nil ctx, Aborted for one already done; nil otherwise.
func CheckCtx(op string, ctx context.Context) error {
	if ctx == nil {
		return lockdriver.InvalidArgument(op, "nil context")
	}
	if err := ctx.Err(); err != nil {
		return &lock.Error{Code: lock.CodeAborted, Op: op, Msg: "context done", Err: err}
	}
	return nil
}

// Map turns a go-redis error into a *lock.Error with the syncguard
// code for it. It classifies by Go error types and go-redis's typed error
// predicates, falling back to the Redis error prefix (the first word of
// the reply, which is the protocol's error kind).
func Map(ctx context.Context, op string, err error) error {
	if le := (*lock.Error)(nil); errors.As(err, &le) {
		return err // already mapped (e.g. by runAcquire)
	}
	if redis.HasErrorPrefix(err, KindPrefix) {
		return &lock.Error{Code: lock.CodeInvalidArgument, Op: op, Err: lock.ErrKindMismatch}
	}
	code, msg := classify(ctx, err)
	switch {
	case code == lock.CodeAborted && !errors.Is(err, ctx.Err()):
		err = ctx.Err()
	case code == lock.CodeNetworkTimeout && atDeadline(ctx) && !errors.Is(err, context.DeadlineExceeded):
		// go-redis's read deadline is the context's (ContextTimeoutEnabled):
		// its i/o timeout can come a moment before ctx reports the
		// deadline. It is the deadline all the same.
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

// classify returns the code and message of a client error err under ctx.
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

// classifyReply returns the code and message of an error reply.
func classifyReply(err error, reply string) (lock.Code, string) {
	switch {
	case strings.HasPrefix(reply, CorruptPrefix):
		return lock.CodeInternal, "corrupt lock data"
	case redis.HasErrorPrefix(err, "NOAUTH"), redis.HasErrorPrefix(err, "WRONGPASS"):
		return lock.CodeAuthFailed, "redis rejected the credentials"
	case redis.IsPermissionError(err), strings.Contains(reply, scriptDenied):
		return lock.CodeAuthFailed, Denied(reply)
	case redis.IsAuthError(err):
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

// ACLDoc is where the documentation gives the ACL rule of each role, for
// the messages of permission errors.
const ACLDoc = "docs/acl.md"

// scriptDenied is in every error Redis raises for a command a script
// calls that the user's ACL rule does not allow: "ERR The user executing
// the script can't run this command or subcommand", "... can't access at
// least one of the keys ...", "... can't publish to the channel ...".
const scriptDenied = "The user executing the script can't"

// IsDenied reports whether err is Redis refusing a command, key or channel
// to the user's ACL rule: a NOPERM reply, or the error of a script's call
// that the rule does not allow.
func IsDenied(err error) bool {
	if err == nil {
		return false
	}
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		return false
	}
	return redis.IsPermissionError(err) || strings.Contains(rerr.Error(), scriptDenied)
}

// Denied says what a permission error reply (IsDenied) refuses, in the
// words of Redis's reply, and where the rule to grant is documented.
// Redis names the command of a NOPERM reply; it does not name the command
// a script was refused (ACL LOG, an admin command, does).
func Denied(reply string) string {
	what := "a command, key or channel"
	switch {
	case strings.Contains(reply, "permissions to run the '"):
		// NOPERM this user has no permissions to run the 'set' command
		cmd := reply[strings.Index(reply, "permissions to run the '")+len("permissions to run the '"):]
		if i := strings.IndexByte(cmd, '\''); i >= 0 {
			cmd = cmd[:i]
		}
		what = "the command " + strings.ToUpper(cmd)
	case strings.Contains(reply, "one of the keys"), strings.Contains(reply, "of the keys mentioned"):
		what = "a key outside its key patterns (~)"
	case strings.Contains(reply, "one of the channels"), strings.Contains(reply, "to the channel"):
		what = "a channel outside its channel patterns (&)"
	case strings.Contains(reply, "can't run this command"):
		what = "a command the script calls (Redis does not say which; ACL LOG does)"
	}
	return "permission denied: the Redis user's ACL rule does not allow " + what +
		"; grant the rule of " + ACLDoc + " for this role"
}
