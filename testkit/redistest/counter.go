package redistest

import (
	"context"
	"net"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// Counter is a go-redis hook that counts what a client sends, for tests
// that assert "no I/O" or count round trips. Add it with Count.
type Counter struct {
	// Dials counts new connections.
	Dials atomic.Int64
	// Commands counts commands, one per command of a pipeline.
	Commands atomic.Int64
	// RoundTrips counts single commands plus whole pipelines.
	RoundTrips atomic.Int64
	// Scripts counts EVAL, EVALSHA and their read-only forms.
	Scripts atomic.Int64
}

// Count adds a new Counter to c and returns it.
func Count(c *redis.Client) *Counter {
	n := &Counter{}
	c.AddHook(n)
	return n
}

// DialHook implements redis.Hook.
func (n *Counter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		n.Dials.Add(1)
		return next(ctx, network, addr)
	}
}

// ProcessHook implements redis.Hook.
func (n *Counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		n.RoundTrips.Add(1)
		n.count(cmd)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (n *Counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n.RoundTrips.Add(1)
		for _, c := range cmds {
			n.count(c)
		}
		return next(ctx, cmds)
	}
}

func (n *Counter) count(cmd redis.Cmder) {
	n.Commands.Add(1)
	if strings.HasPrefix(strings.ToLower(cmd.Name()), "eval") {
		n.Scripts.Add(1)
	}
}
