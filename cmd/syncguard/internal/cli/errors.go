package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
)

// exitError is an error with its exit status. An empty msg means the
// command already printed what went wrong.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, args...)}
}

func failf(format string, args ...any) error {
	return &exitError{code: ExitFailure, msg: fmt.Sprintf(format, args...)}
}

// message is err for people: a *lock.Error's own message without the
// "syncguard: op: Code:" the library puts in front.
func message(err error) string {
	var le *lock.Error
	if errors.As(err, &le) && le.Msg != "" {
		msg := le.Msg
		if le.Err != nil && le.Code != lock.CodeInvalidArgument {
			msg += ": " + le.Err.Error()
		}
		return msg
	}
	return err.Error()
}

// oneLine keeps an error message on one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(s), " ")
}

// connError says in one line why the server at addr cannot be used.
func (s *session) connError(ctx context.Context, addr string, err error) error {
	var (
		nerr net.Error
		derr *net.DNSError
		terr *timeoutError
	)
	switch {
	case ctx.Err() != nil:
		return failf("interrupted while connecting to %s", addr)
	case errors.As(err, &terr):
		return stalled(addr, terr.d)
	case redis.HasErrorPrefix(err, "NOAUTH"):
		return failf("%s requires a password: put it in the URL (redis://:PASSWORD@%s or redis://USER:PASSWORD@...)", addr, addr)
	case redis.HasErrorPrefix(err, "WRONGPASS"), redis.IsAuthError(err):
		return failf("%s rejected the credentials in the URL (%s)", addr, strings.TrimSpace(err.Error()))
	case redis.IsPermissionError(err):
		return failf("%s: the user may not run PING (%s)", addr, strings.TrimSpace(err.Error()))
	case strings.Contains(err.Error(), "cluster support disabled"):
		return failf("several --redis URLs are the seeds of a Redis Cluster, but %s is not in cluster mode: give one URL", addr)
	case errors.Is(err, syscall.ECONNREFUSED):
		return failf("cannot connect to %s: connection refused (is Redis running there?)", addr)
	case errors.As(err, &derr):
		return failf("cannot resolve the host of %s: %v", addr, derr)
	case errors.As(err, &nerr) && nerr.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return stalled(addr, s.timeout)
	}
	return failf("cannot use the Redis at %s: %v", addr, err)
}

// stalled says that the server at addr did not answer within d.
func stalled(addr string, d time.Duration) error {
	return failf("%s did not answer within %v (--timeout): the server may be stalled or overloaded", addr, d)
}

// redisError says in one line what went wrong with a command to the
// server at addr, after the connection was checked.
func redisError(ctx context.Context, addr string, err error) error {
	var (
		nerr net.Error
		terr *timeoutError
	)
	switch {
	case ctx.Err() != nil:
		return &exitError{code: ExitFailure, msg: "interrupted"}
	case errors.As(err, &terr):
		return stalled(addr, terr.d)
	case redis.IsPermissionError(err):
		return failf("%s refused a command: permission denied: %v (the operators' ACL rules: docs/acl.md)", addr, err)
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, redis.ErrClosed):
		return failf("lost the connection to %s: %v", addr, err)
	case errors.As(err, &nerr) && nerr.Timeout():
		return failf("%s did not answer in time", addr)
	}
	return failf("%s: %v", addr, err)
}
