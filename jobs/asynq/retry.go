package asynqlock

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/hibiken/asynq"
)

// MinRetryDelay is the shortest delay RetryDelay gives a busy duplicate or
// a task over its concurrency limit.
const MinRetryDelay = 100 * time.Millisecond

// MaxLimitRetryDelay is the longest delay RetryDelay gives a task over its
// concurrency limit.
const MaxLimitRetryDelay = 2 * time.Second

// RetryDelay returns an asynq.RetryDelayFunc for asynq.Config. A busy
// duplicate returns when the holder's lease expires, with some jitter. A
// task over its limit returns after a random delay between MinRetryDelay
// and MaxLimitRetryDelay. Other errors get fallback's delay, or
// asynq.DefaultRetryDelayFunc's when fallback is nil. docs/asynq.md has
// the details.
func RetryDelay(fallback asynq.RetryDelayFunc) asynq.RetryDelayFunc {
	if fallback == nil {
		fallback = asynq.DefaultRetryDelayFunc
	}
	return func(n int, err error, t *asynq.Task) time.Duration {
		var l *LimitError
		if errors.As(err, &l) {
			bound := min(max(time.Until(l.ExpiresAt), MinRetryDelay), MaxLimitRetryDelay)
			return MinRetryDelay + rand.N(bound-MinRetryDelay+1)
		}
		var d *DuplicateError
		if !errors.As(err, &d) || d.Done {
			return fallback(n, err, t)
		}
		wait := max(time.Until(d.ExpiresAt), MinRetryDelay)
		return wait + rand.N(wait/10+1)
	}
}
