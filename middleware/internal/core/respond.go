package core

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// unmeasuredRetryAfter caps Retry-After on a route where no handler has
// run yet here: a live holder's lease says up to the whole TTL, while
// most holders finish in a fraction of it.
const unmeasuredRetryAfter = time.Second

// RetryAfter returns how long a client should wait after err (matching
// lock.ErrLocked) on route: a dead holder's time left (a lease not
// extended: under half the TTL), else the time left capped by the
// route's average hold time, or by a second before one is measured.
// For a limit, the earliest expiry among the slots.
func (g *Guard) RetryAfter(route string, err error) time.Duration {
	est, ok := g.holds.estimate(route)
	if !ok {
		est = -1
	}
	return retryAfter(err, g.ttl, est, time.Now())
}

// retryAfter is RetryAfter at now, with the hold-time estimate est (< 0:
// none).
func retryAfter(err error, ttl, est time.Duration, now time.Time) time.Duration {
	d := ttl
	var le *lock.LockedError
	known := errors.As(err, &le) && !le.ExpiresAt.IsZero()
	if known {
		d = le.ExpiresAt.Sub(now)
	}
	switch {
	case known && d < ttl/2: // not extended: a dead holder
	case est >= 0:
		d = min(d, est)
	default:
		d = min(d, unmeasuredRetryAfter)
	}
	secs := (d + time.Second - 1) / time.Second
	return max(secs, 1) * time.Second
}

// Refusal returns r for the busy or error handler: with the problem type
// base, when one is set, for guard's default answers.
func (g *Guard) Refusal(r *http.Request) *http.Request {
	if g.problemBase == "" {
		return r
	}
	return r.WithContext(g.RefusalContext(r.Context()))
}

// RefusalContext is Refusal on a context.
func (g *Guard) RefusalContext(ctx context.Context) context.Context {
	if g.problemBase == "" {
		return ctx
	}
	return settings.WithProblemBase(ctx, g.problemBase)
}
