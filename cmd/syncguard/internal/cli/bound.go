package cli

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// defaultTimeout is --timeout's default.
const defaultTimeout = 10 * time.Second

// boundHook gives every command and pipeline a deadline d after it starts,
// unless its context has an earlier one. The command's client sets
// ContextTimeoutEnabled, so go-redis ends a round trip at that deadline:
// a stalled server (SIGSTOP, a reply that never comes) fails a command in
// d, not after go-redis's own timeouts and retries, and watch ends.
type boundHook struct{ d time.Duration }

// DialHook implements redis.Hook: a dial runs under the command's bounded
// context.
func (h boundHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (h boundHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		bctx, cancel := context.WithTimeout(ctx, h.d)
		defer cancel()
		err := next(bctx, cmd)
		if h.passed(ctx, bctx, err) {
			err = &timeoutError{d: h.d, err: err}
			cmd.SetErr(err)
		}
		return err
	}
}

// ProcessPipelineHook implements redis.Hook.
func (h boundHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		bctx, cancel := context.WithTimeout(ctx, h.d)
		defer cancel()
		err := next(bctx, cmds)
		if h.passed(ctx, bctx, err) {
			err = &timeoutError{d: h.d, err: err}
			for _, cmd := range cmds {
				if cerr := cmd.Err(); h.passed(ctx, bctx, cerr) {
					cmd.SetErr(&timeoutError{d: h.d, err: cerr})
				}
			}
		}
		return err
	}
}

// passed reports whether err is the end of a command by the hook's
// deadline (bctx's), not by the caller's context or a reply, and not
// reported as such by a hook further in. The clock decides, not
// bctx.Err(): the connection's deadline can fire before bctx's timer.
func (h boundHook) passed(ctx, bctx context.Context, err error) bool {
	var te *timeoutError
	deadline, _ := bctx.Deadline()
	return err != nil && ctx.Err() == nil && !time.Now().Before(deadline) && !errors.Is(err, redis.Nil) && !errors.As(err, &te)
}

// timeoutError is a command that got no reply within --timeout.
type timeoutError struct {
	d   time.Duration
	err error
}

// Error says what happened and which flag bounds it.
func (e *timeoutError) Error() string {
	return "no reply within " + e.d.String() + " (--timeout): the server may be stalled or overloaded (" + e.err.Error() + ")"
}

// Unwrap returns go-redis's error.
func (e *timeoutError) Unwrap() error { return e.err }
