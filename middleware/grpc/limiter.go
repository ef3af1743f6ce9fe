package grpclock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"

	"github.com/syncguard-go/syncguard/lock"
)

// Limiter is a rate limit for go-grpc-middleware's ratelimit
// interceptors, shared by every instance on b: at most n calls per key
// start in any window, each taking a slot of lock.WithLimit that expires
// a window after it was taken. It is safe for concurrent use.
type Limiter struct {
	c *config
	n int
}

// NewLimiter returns a Limiter on b of the calls' keys read by key,
// which sees no request message: WithLimit(n) sets the calls per window,
// WithTTL the window (both required). Errors as UnaryServerInterceptor's.
func NewLimiter(b lock.Backend, key KeyFunc, opts ...Option) (*Limiter, error) {
	c, err := newConfig(b, key, opts, forLimiter)
	if err != nil {
		return nil, err
	}
	return &Limiter{c: c, n: c.g.Limit()}, nil
}

// Limit takes a slot for the call of ctx. Every slot of its key taken
// gives an error matching guard.ErrLimitReached (and lock.ErrLocked),
// with the pushback trailer set to when the first slot frees: a slot ends
// at its expiry by the Redis server's clock, so a retry sent then is
// admitted unless another call took the slot first.
func (l *Limiter) Limit(ctx context.Context) error {
	method, _ := grpc.Method(ctx)
	key, err := l.c.callKey(ctx, method, nil)
	if err != nil {
		return err
	}
	err = l.c.g.Take(ctx, key)
	var le *lock.LockedError
	if errors.As(err, &le) && !le.ExpiresAt.IsZero() {
		pushback(ctx, max(time.Until(le.ExpiresAt), time.Millisecond))
	}
	if err != nil {
		return fmt.Errorf("%w (%d calls per %s)", err, l.n, l.c.g.TTL())
	}
	return nil
}
