package transport

import (
	"context"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
)

// directRule decides, for one client, which calls go out from their
// callers' goroutines (docs/client-retries.md).
type directRule struct {
	anyDeadline bool          // ContextTimeoutEnabled
	bound       time.Duration // see clientBound
}

// unbounded is the bound of a client without read or write timeouts.
const unbounded = time.Duration(math.MaxInt64)

// directRuleOf returns the rule of client.
func directRuleOf(client any) *directRule {
	o, ok := optionsOf(client)
	if !ok {
		return &directRule{bound: unbounded}
	}
	return &directRule{
		bound: clientBound(o),
		// A timeout of -2 sets no deadline, not the context's either.
		anyDeadline: o.contextTimeouts && o.read >= 0 && o.write >= 0,
	}
}

// clientBound is the longest a client takes to give up on a command when
// the server does not answer.
func clientBound(o clientOptions) time.Duration {
	if o.read <= 0 || o.write <= 0 {
		return unbounded
	}
	tries := time.Duration(max(o.retries, 0) + 1)
	return tries*(max(o.dial, o.pool, 0)+o.write+o.read) + (tries-1)*max(o.backoff, 0)
}

// sendsDirect reports whether a call on ctx goes out from its caller's
// goroutine.
func sendsDirect(ctx context.Context, d *directRule) bool {
	if ctx.Done() == nil {
		return true
	}
	if d == nil {
		return false
	}
	dl, has := ctx.Deadline()
	switch {
	case !has, d.anyDeadline:
		return true
	case d.bound == unbounded:
		return false
	}
	return time.Until(dl) >= d.bound
}

// processDirect sends cmd from this goroutine, for a call sendsDirect let
// go out from here.
func processDirect(ctx context.Context, p processor, cmd redis.Cmder) error {
	_ = p.Process(ctx, cmd)
	return endedWith(ctx, cmd)
}

// endedWith returns ErrAbandoned for a call whose command failed once ctx
// had ended: go-redis, which sends it on ctx, may have stopped for ctx
// (a retry's backoff, a pool wait) after a try whose outcome is unknown.
func endedWith(ctx context.Context, cmd redis.Cmder) error {
	if cmd.Err() != nil && ctx.Err() != nil {
		return ErrAbandoned
	}
	return nil
}
