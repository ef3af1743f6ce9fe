package lock

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Acquire takes the lock on key from b, retrying while the key is busy:
// exponential backoff from the base delay with jitter, every delay clamped
// to the time left before the timeout, at most MaxRetries retries (see
// [Option]). Every wait ends at once when ctx is done.
//
// Errors: an [*Error] with [CodeAcquisitionTimeout] that also matches
// [ErrLocked] (and unwraps to the last [*LockedError]) when it gives up;
// [CodeAborted] matching ctx.Err() when ctx ends; [CodeInvalidArgument]
// for bad options; system errors from the backend are returned at once,
// not retried.
func Acquire(ctx context.Context, b Backend, key string, opts ...Option) (Lease, error) {
	c, err := newConfig(opts)
	if err != nil {
		return Lease{}, err
	}
	return c.acquire(ctx, b, key)
}

func (c *config) acquire(ctx context.Context, b Backend, key string) (l Lease, err error) {
	if ctx == nil {
		return Lease{}, invalid("acquire", "nil context")
	}
	ctx, obs := observeAcquire(ctx, b, key)
	if obs != nil {
		defer func() { obs.Done(l, err) }()
	}
	if err := ctx.Err(); err != nil {
		return Lease{}, aborted(err)
	}
	deadline := time.Now().Add(c.timeout)
	var timer *time.Timer
	for attempt := 0; ; attempt++ {
		l, err := b.Acquire(ctx, key, c.ttl)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrLocked) {
			if obs != nil {
				obs.Attempt(attempt+1, err, 0)
			}
			return Lease{}, err
		}
		left := time.Until(deadline)
		if attempt >= c.maxRetries || left <= 0 {
			if obs != nil {
				obs.Attempt(attempt+1, err, 0)
			}
			return Lease{}, newError(CodeAcquisitionTimeout, "acquire",
				"key still locked after "+itoa(attempt+1)+" attempts", err)
		}
		d := min(c.delay(attempt), left)
		if obs != nil {
			obs.Attempt(attempt+1, err, d)
		}
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			return Lease{}, aborted(ctx.Err())
		case <-timer.C:
		}
	}
}

// delay is the wait after the given failed attempt (0-based).
func (c *config) delay(attempt int) time.Duration {
	d := c.baseDelay
	if c.backoff == BackoffExponential {
		for i := 0; i < attempt && d < time.Hour; i++ {
			d *= 2
		}
	}
	if c.maxDelay > 0 && d > c.maxDelay {
		d = c.maxDelay
	}
	if d <= 0 {
		return 0
	}
	switch c.jitter {
	case JitterEqual:
		d = d/2 + rand.N(d/2+1)
	case JitterFull:
		d = rand.N(d + 1)
	}
	return d
}

func aborted(err error) *Error {
	return newError(CodeAborted, "acquire", "context done", err)
}
