package transport

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Sender sends commands on one go-redis client, each bounded by its
// context, coalescing the calls of concurrent goroutines when asked to.
// It is safe for concurrent use.
type Sender struct {
	client redis.UniversalClient
	direct *directRule // when a call goes out from its caller's goroutine (direct.go)
	co     *coalescer  // nil: each call on a round trip of its own (coalesce.go)
}

// New returns a Sender on client. With coalesce, the calls of concurrent
// goroutines share pipelines (coalesce.go); without it, each call is a
// round trip of its own. What it reads of the client's options (through
// an Options method, as *redis.Client and *redis.ClusterClient have)
// decides which calls go out from their callers' goroutines (direct.go).
func New(client redis.UniversalClient, coalesce bool) *Sender {
	s := &Sender{client: client, direct: directRuleOf(client)}
	if coalesce {
		s.co = newCoalescer(client, s.direct)
	}
	return s
}

// Do sends cmd and returns nil when it has its reply (cmd.Err() tells how
// it went). When ctx ends first it returns an error matching ctx.Err() and
// ErrNotSent (the command was still queued: it did not run) or
// ErrAbandoned (it may have run); cmd must not be read then, as the round
// trip may still write it. A panic of the client is raised in the caller
// whose call sent it.
func (s *Sender) Do(ctx context.Context, cmd *redis.Cmd) error {
	switch {
	case s.co != nil:
		if err := s.co.do(ctx, cmd); err != nil {
			return abandoned(ctx, err)
		}
		return nil
	case sendsDirect(ctx, s.direct):
		return processDirect(ctx, s.client, cmd)
	}
	return Bounded(ctx, func(ctx context.Context) { _ = s.client.Process(ctx, cmd) })
}

// Queued reports how many calls wait in the coalescing queue (0 without
// coalescing), for tests that must know the queue has formed.
func (s *Sender) Queued() int {
	if s.co == nil {
		return 0
	}
	s.co.mu.Lock()
	defer s.co.mu.Unlock()
	return len(s.co.queue)
}
