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
// When b is a [Notifier], a release of key wakes the waiter early: on the
// first contention Acquire watches the key and tries once more at once
// (that re-check closes the gap between the failed attempt and the watch
// and does not count as a retry), then waits for a wake-up, the backoff
// timer or ctx, whichever comes first. An attempt brought by a wake-up
// does not count against MaxRetries (it follows a release; the timeout
// still bounds the whole wait) and does not restart the backoff timer,
// which keeps its schedule as the polling fallback for a holder whose
// lease expires without a release, and the timeout still bounds the whole
// wait. Without a Notifier Acquire only polls.
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
	notifier, _ := b.(Notifier)
	var (
		timer   *time.Timer
		timerAt time.Time // when the pending backoff timer fires; zero when none is pending
		waits   int       // backoff timers started: the index into the delay schedule
		retries int       // attempts counted against maxRetries
		watch   <-chan struct{}
		unwatch func() // nil until the first watch
	)
	defer func() {
		if unwatch != nil {
			unwatch()
		}
	}()
	for attempt := 1; ; attempt++ {
		l, err := b.Acquire(ctx, key, c.ttl)
		if err == nil {
			return l, nil
		}
		if !errors.Is(err, ErrLocked) {
			if obs != nil {
				obs.Attempt(attempt, err, 0)
			}
			return Lease{}, err
		}
		left := time.Until(deadline)
		if retries >= c.maxRetries || left <= 0 {
			if obs != nil {
				obs.Attempt(attempt, err, 0)
			}
			return Lease{}, newError(CodeAcquisitionTimeout, "acquire",
				"key still locked after "+itoa(attempt)+" attempts", err)
		}
		if notifier != nil && unwatch == nil {
			watch, unwatch = watchKey(notifier, key)
			if watch != nil {
				// A release between the attempt above and the watch
				// published to nobody: look again before waiting.
				if obs != nil {
					obs.Attempt(attempt, err, 0)
				}
				continue
			}
		}
		var wait time.Duration // until the next attempt at the latest
		if timerAt.IsZero() {
			wait = min(c.delay(waits), left)
			waits++
			if timer == nil {
				timer = time.NewTimer(wait)
				defer timer.Stop()
			} else {
				timer.Reset(wait)
			}
			timerAt = time.Now().Add(wait)
		} else {
			wait = max(time.Until(timerAt), 0)
		}
		if obs != nil {
			obs.Attempt(attempt, err, wait)
		}
		select {
		case <-ctx.Done():
			return Lease{}, aborted(ctx.Err())
		case <-timer.C:
			timerAt = time.Time{}
			retries++
		case <-watch:
			// A wake-up follows a release, so the attempt it brings does
			// not use up a retry (MaxRetries bounds polling; the timeout
			// bounds everything). One-shot: watch again before the
			// attempt, so a release during it wakes us.
			unwatch()
			watch, unwatch = watchKey(notifier, key)
		}
	}
}

// watchKey calls n.WatchKey and guards against a nil cancel.
func watchKey(n Notifier, key string) (<-chan struct{}, func()) {
	ch, cancel := n.WatchKey(key)
	if cancel == nil {
		cancel = func() {}
	}
	return ch, cancel
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
