package redisbackend

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend/internal/transport"
)

// replyErr is an error reply of Redis, as go-redis returns it.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

var _ redis.Error = replyErr("")

// TestCleanupRetriesEveryTransientAnswer: a background clean-up
// (untilAnswered: a waiter leaving its queue, an abandoned acquisition's
// release) tries again after every transient answer, the error replies of
// a server that is up but not serving yet included, and stops at an
// answer that will not change.
func TestCleanupRetriesEveryTransientAnswer(t *testing.T) {
	tests := []struct {
		desc  string
		err   error
		again bool
	}{
		{"LOADING", replyErr("LOADING Redis is loading the dataset in memory"), true},
		{"BUSY", replyErr("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."), true},
		{"MASTERDOWN", replyErr("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."), true},
		{"TRYAGAIN", replyErr("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{"CLUSTERDOWN", replyErr("CLUSTERDOWN The cluster is down"), true},
		{"READONLY", replyErr("READONLY You can't write against a read only replica."), true},
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"EOF", io.EOF, true},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}, true},
		{"pool timeout", redis.ErrPoolTimeout, true},
		{"abandoned call", transport.ErrAbandoned, true},
		{"NOPERM", replyErr("NOPERM this user has no permissions to run the 'evalsha' command"), false},
		{"WRONGTYPE", replyErr("WRONGTYPE Operation against a key holding the wrong kind of value"), false},
		{"corrupt lock data", replyErr(corruptPrefix + " lock data is not JSON"), false},
		{"unknown reply", replyErr("ERR something else"), false},
		{"unknown error", errors.New("boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			t.Parallel()
			const fails = 2 // then the call succeeds
			calls := 0
			untilAnswered(context.Background(), func(context.Context) error {
				calls++
				if calls <= fails {
					return tt.err
				}
				return nil
			})
			want := 1
			if tt.again {
				want = fails + 1
			}
			if calls != want {
				t.Errorf("%d calls after %d failures with %v, want %d", calls, fails, tt.err, want)
			}
		})
	}
}
