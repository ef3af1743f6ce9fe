package transport

import (
	"context"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
)

// Direct calls. Every call ends by its context's deadline (see bounded.go),
// or by the client's own bound when that comes first: go-redis gives up on
// a command after its timeouts and retries whatever the context says. A
// call whose context has no deadline, or a deadline no earlier than that
// bound, therefore goes out from its caller's goroutine: go-redis ends it
// first anyway. Only a call whose deadline comes before the client's bound
// waits for its reply on a goroutine of its own while the caller waits for
// the reply or the deadline; that hand-off between goroutines is a large
// part of an uncontended Acquire+Release (BenchmarkSerialCycle measures
// it). A context that is cancelled without a deadline does not end a call
// on the wire: the call ends by the client's bound, as a
// context.Background() call does.
//
// go-redis ends a command at its context's deadline itself when the
// client's options set ContextTimeoutEnabled (off by default): it then
// gives the connection the context's deadline when that comes before the
// read and write timeouts, and retries nothing past it. With such a client
// every call goes out from its caller's goroutine.
//
// (A copy of a default client with ContextTimeoutEnabled set, made by
// Client.WithTimeout, would share its pool but, in the go-redis this module
// requires, not its hooks: redisotel's spans would be lost. So the option
// stays the application's choice.)

// directRule is what decides, for one client, which calls go out from
// their callers' goroutines.
type directRule struct {
	// anyDeadline: the client ends a command at its context's deadline
	// (ContextTimeoutEnabled).
	anyDeadline bool
	// bound is the longest the client takes to give up on a command
	// (clientBound); a deadline at least this far away is never missed.
	bound time.Duration
}

// unbounded is the bound of a client without read or write timeouts.
const unbounded = time.Duration(math.MaxInt64)

// directRuleOf returns the rule of client: from its options when they can
// be read (optionsOf); otherwise only calls without a deadline go direct.
func directRuleOf(client any) *directRule {
	o, ok := optionsOf(client)
	if !ok {
		return &directRule{bound: unbounded}
	}
	return &directRule{
		bound: clientBound(o),
		// Read and write timeouts of -2 in the options (New's -1, "no
		// timeout", reads 0 here) make go-redis set no deadline on the
		// connection, the context's neither.
		anyDeadline: o.contextTimeouts && o.read >= 0 && o.write >= 0,
	}
}

// clientBound is the longest a client with options o (as go-redis filled
// them in: a timeout of 0 is none) takes to give up on a command when the
// server does not answer: per try, waiting for a connection (PoolTimeout)
// or dialing one (DialTimeout), then the write and read timeouts;
// MaxRetries more tries, each after a backoff. A client without read or
// write timeouts has no bound.
func clientBound(o clientOptions) time.Duration {
	if o.read <= 0 || o.write <= 0 {
		return unbounded
	}
	tries := time.Duration(max(o.retries, 0) + 1)
	return tries*(max(o.dial, o.pool, 0)+o.write+o.read) + (tries-1)*max(o.backoff, 0)
}

// sendsDirect reports whether a call on ctx goes out from its caller's
// goroutine: always when ctx has no deadline (nothing but go-redis's own
// bound can end the call), and when its deadline is no earlier than the
// client's bound, or the client ends calls at their deadline. d is the
// client's rule (nil: only contexts that cannot end go direct).
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

// processDirect sends cmd on p from this goroutine (see sendsDirect) and
// returns nil, or, when ctx ended and cmd failed, an error matching
// ErrAbandoned (the command may have run) and ctx.Err(), as Bounded does.
func processDirect(ctx context.Context, p processor, cmd redis.Cmder) error {
	_ = p.Process(ctx, cmd)
	if cmd.Err() != nil && ctx.Err() != nil {
		return abandoned(ctx, ErrAbandoned)
	}
	return nil
}
