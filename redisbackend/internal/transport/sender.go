package transport

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Sender sends commands on one go-redis client, each bounded by its
// context. It is safe for concurrent use.
type Sender struct {
	client redis.UniversalClient
	direct *directRule
	co     *coalescer // nil: no coalescing
}

// New returns a Sender on client. With coalesce, concurrent calls share
// pipelines.
func New(client redis.UniversalClient, coalesce bool) *Sender {
	s := &Sender{client: client, direct: directRuleOf(client)}
	if coalesce {
		s.co = newCoalescer(client, s.direct)
	}
	return s
}

// Do sends cmd and returns nil once it has its reply. When ctx ends first,
// it returns an error matching ctx.Err() and ErrNotSent or ErrAbandoned;
// cmd must not be read then.
func (s *Sender) Do(ctx context.Context, cmd *redis.Cmd) error {
	switch {
	case s.co != nil:
		if err := s.co.do(ctx, cmd); err != nil {
			return abandoned(ctx, err)
		}
		return nil
	case sendsDirect(ctx, s.direct):
		if err := processDirect(ctx, s.client, cmd); err != nil {
			return abandoned(ctx, err)
		}
		return nil
	}
	return Bounded(ctx, func(ctx context.Context) { _ = s.client.Process(ctx, cmd) })
}

// InFlight reports how many round trips the coalescer has under way, for
// tests.
func (s *Sender) InFlight() int {
	if s.co == nil {
		return 0
	}
	s.co.mu.Lock()
	defer s.co.mu.Unlock()
	return s.co.inFlight
}

// Queued reports how many calls wait in the coalescing queue, for tests.
func (s *Sender) Queued() int {
	if s.co == nil {
		return 0
	}
	s.co.mu.Lock()
	defer s.co.mu.Unlock()
	return len(s.co.queue)
}
