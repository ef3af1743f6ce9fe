package redisbackend

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"
)

// Direct calls. Every Backend call ends by its context's deadline (see
// bounded.go), or by the client's own bound when that comes first: go-redis
// gives up on a command after its timeouts and retries whatever the
// context says. A call whose context has no deadline, or a deadline no
// earlier than that bound, therefore goes out from its caller's goroutine:
// go-redis ends it first anyway. Only a call whose deadline comes before
// the client's bound waits for its reply on a goroutine of its own while
// the caller waits for the reply or the deadline; that hand-off between
// goroutines is a large part of an uncontended Acquire+Release
// (BenchmarkSerialCycle measures it). A context that is cancelled without a
// deadline does not end a call on the wire: the call ends by the client's
// bound, as a context.Background() call does.
//
// go-redis ends a command at its context's deadline itself when the
// client's options set ContextTimeoutEnabled (off by default): it then
// gives the connection the context's deadline when that comes before the
// read and write timeouts, and retries nothing past it. With such a client
// every call goes out from its caller's goroutine.
//
// (A copy of a default client with ContextTimeoutEnabled set, made by
// Client.WithTimeout, would share its pool but, in go-redis v9.23, not its
// hooks: redisotel's spans would be lost. So the option stays the
// application's choice.)

// directSender is a client that calls go out on from their callers'
// goroutines, with the deadlines it ends calls by on its own.
type directSender struct {
	processor
	// anyDeadline: the client ends a command at its context's deadline
	// (ContextTimeoutEnabled).
	anyDeadline bool
	// bound is the longest the client takes to give up on a command
	// (clientBound); a deadline at least this far away is never missed.
	bound time.Duration
}

// unbounded is the bound of a client without read or write timeouts.
const unbounded = time.Duration(math.MaxInt64)

// directClient returns the directSender of client, or nil for a client
// without go-redis's Process method; the Feature says whether every call
// with a deadline goes out directly and why (Features.DirectCalls).
func directClient(client any) (processor, Feature) {
	p, ok := client.(processor)
	if !ok {
		return nil, Feature{Why: fmt.Sprintf(whyLacks, client, "Process")}
	}
	o, ok := optionsOf(client)
	if !ok {
		// Options unknown: only calls without a deadline go direct.
		return &directSender{processor: p, bound: unbounded}, Feature{Why: fmt.Sprintf(whyLacks, client, "Options")}
	}
	d := &directSender{processor: p, bound: clientBound(o)}
	switch {
	case !o.contextTimeouts:
		return d, Feature{Why: "the client's options do not set ContextTimeoutEnabled: a call with a deadline before the client's own bound (" + boundText(d.bound) + ") waits on a goroutine"}
	case o.read < 0 || o.write < 0:
		// -2 in the options (New's -1, "no timeout", reads 0 here):
		// go-redis sets no deadline on the connection, the context's neither.
		return d, Feature{Why: "the client's ReadTimeout or WriteTimeout is -2: go-redis sets no deadlines"}
	}
	d.anyDeadline = true
	return d, Feature{On: true, Why: "the client's options set ContextTimeoutEnabled"}
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

func boundText(d time.Duration) string {
	if d == unbounded {
		return "none: no read or write timeout"
	}
	return d.String()
}

// sendsDirect reports whether a call on ctx goes out from its caller's
// goroutine: always when ctx has no deadline (nothing but go-redis's own
// bound can end the call), and when its deadline is no earlier than the
// client's bound, or the client ends calls at their deadline. direct is
// the Backend's directSender (nil: only contexts that cannot end).
func sendsDirect(ctx context.Context, direct processor) bool {
	if ctx.Done() == nil {
		return true
	}
	d, ok := direct.(*directSender)
	if !ok {
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

// processDirect sends cmd on direct from this goroutine (see sendsDirect)
// and returns nil, or, when ctx ended and cmd failed, an error matching
// errAbandoned (the command may have run) and ctx.Err(), as bounded does.
func processDirect(ctx context.Context, direct processor, cmd redis.Cmder) error {
	_ = direct.Process(ctx, cmd)
	if cmd.Err() != nil && ctx.Err() != nil {
		return abandoned(ctx, errAbandoned)
	}
	return nil
}
