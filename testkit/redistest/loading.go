package redistest

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// WithSlowLoad makes the server load its data slowly after a Restart:
// perKey per key of the AOF's base (Redis's hidden key-load-delay), with
// client commands served between keys, so that a restart answers
// -LOADING for about perKey times the keys that Pad wrote. Use it with
// WithAOF.
func WithSlowLoad(perKey time.Duration) Option {
	return WithArgs("--key-load-delay", strconv.FormatInt(perKey.Microseconds(), 10),
		"--loading-process-events-interval-bytes", "1024")
}

// Pad writes n padding keys ("redistest-pad:<i>") and rewrites the AOF, so
// that they sit in its base, which a restart with WithSlowLoad loads
// slowly. Not allowed on Shared servers.
func (s *Server) Pad(t testing.TB, n int) {
	t.Helper()
	s.forbidShared(t, "Pad")
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p := c.Pipeline()
	for i := range n {
		p.Set(ctx, "redistest-pad:"+strconv.Itoa(i), "padding", 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("redistest: Pad %s: %v", s.addr, err)
	}
	if err := c.BgRewriteAOF(ctx).Err(); err != nil {
		t.Fatalf("redistest: Pad %s: BGREWRITEAOF: %v", s.addr, err)
	}
	for {
		info, err := c.Info(ctx, "persistence").Result()
		if err != nil {
			t.Fatalf("redistest: Pad %s: INFO: %v", s.addr, err)
		}
		if strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("redistest: Pad %s: the AOF rewrite did not end", s.addr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// ReplyLoser is a go-redis hook that loses the reply of one script command
// (EVAL, EVALSHA, FCALL) after the server ran it: the command runs, then
// the caller gets a reset connection, as when a server is killed between
// running a command and sending its reply. Add it with AddHook; it sits
// outside go-redis's own retries, so they do not re-send that command.
type ReplyLoser struct {
	mu    sync.Mutex
	after func() // run after the lost command, before its error returns; nil when not armed
	lost  int
}

// Arm makes the next script command's reply lost; after (may be nil) runs
// once that command has run, before its caller sees the error, such as
// stopping the server.
func (l *ReplyLoser) Arm(after func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after == nil {
		after = func() {}
	}
	l.after = after
}

// Lost returns how many replies were lost.
func (l *ReplyLoser) Lost() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// DialHook implements redis.Hook.
func (l *ReplyLoser) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook implements redis.Hook.
func (l *ReplyLoser) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook implements redis.Hook.
func (l *ReplyLoser) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch strings.ToLower(cmd.Name()) {
		case "eval", "evalsha", "fcall":
		default:
			return next(ctx, cmd)
		}
		l.mu.Lock()
		after := l.after
		l.after = nil
		l.mu.Unlock()
		if after == nil {
			return next(ctx, cmd)
		}
		if err := next(ctx, cmd); err != nil {
			return err // not run: nothing to lose (Lost does not count it)
		}
		after()
		l.mu.Lock()
		l.lost++
		l.mu.Unlock()
		reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
		cmd.SetErr(reset)
		return reset
	}
}

// LoadingReplies is a go-redis hook that counts the commands answered
// -LOADING (after go-redis's own retries, which a hook wraps): a test of a
// restart that loads slowly (WithSlowLoad) checks with it that its calls
// met the loading server. Add it with AddHook.
type LoadingReplies struct{ n atomic.Int64 }

// Count returns how many commands were answered -LOADING.
func (l *LoadingReplies) Count() int { return int(l.n.Load()) }

// DialHook implements redis.Hook.
func (l *LoadingReplies) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook implements redis.Hook.
func (l *LoadingReplies) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			l.count(cmd.Err())
		}
		return err
	}
}

// ProcessHook implements redis.Hook.
func (l *LoadingReplies) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd) // go-redis sets cmd.Err() once every hook returned
		l.count(err)
		return err
	}
}

func (l *LoadingReplies) count(err error) {
	if redis.IsLoadingError(err) {
		l.n.Add(1)
	}
}
