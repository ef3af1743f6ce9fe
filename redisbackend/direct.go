package redisbackend

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Direct calls. Every Backend call ends by its context's deadline (see
// bounded.go). go-redis ends a command at its context's deadline itself
// only when the client's options set ContextTimeoutEnabled (off by
// default): it then gives the connection the context's deadline when that
// comes before the read and write timeouts, and retries nothing past it.
// Otherwise a call waits for its reply on a goroutine of its own while the
// caller waits for the reply or the deadline, and that hand-off between
// goroutines costs about a third of an uncontended Acquire+Release on 2
// cores (BenchmarkSerialCycle).
//
// So with such a client, a call whose context has a deadline goes out
// from its caller's goroutine. A context that can be cancelled but has no
// deadline still gets the goroutine: only the deadline reaches go-redis,
// so a cancel before it would not end the call.
//
// (A copy of a default client with ContextTimeoutEnabled set, made by
// Client.WithTimeout, would share its pool but, in go-redis v9.23, not its
// hooks: redisotel's spans would be lost. So the option stays the
// application's choice.)

// directClient returns client when it ends a command at its context's
// deadline (see above), or nil; the Feature says which and why
// (Features.DirectCalls).
func directClient(client any) (processor, Feature) {
	p, ok := client.(processor)
	if !ok {
		return nil, Feature{Why: fmt.Sprintf(whyLacks, client, "Process")}
	}
	o, ok := optionsOf(client)
	if !ok {
		return nil, Feature{Why: fmt.Sprintf(whyLacks, client, "Options")}
	}
	switch {
	case !o.contextTimeouts:
		return nil, Feature{Why: "the client's options do not set ContextTimeoutEnabled"}
	case o.read < 0 || o.write < 0:
		// -2 in the options (New's -1, "no timeout", reads 0 here):
		// go-redis sets no deadline on the connection, the context's neither.
		return nil, Feature{Why: "the client's ReadTimeout or WriteTimeout is -2: go-redis sets no deadlines"}
	}
	return p, Feature{On: true, Why: "the client's options set ContextTimeoutEnabled"}
}

// sendsDirect reports whether a call on ctx goes out from its caller's
// goroutine: always when ctx cannot end, and when it has a deadline and
// the Backend has a direct client.
func sendsDirect(ctx context.Context, direct processor) bool {
	if ctx.Done() == nil {
		return true
	}
	if direct == nil {
		return false
	}
	_, ok := ctx.Deadline()
	return ok
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
