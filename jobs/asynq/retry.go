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
// concurrency limit (a *LimitError).
const MaxLimitRetryDelay = 2 * time.Second

// RetryDelay returns an asynq.RetryDelayFunc for asynq.Config; every error
// other than the two below gets fallback's delay (asynq.DefaultRetryDelayFunc
// when nil).
//
// A busy duplicate (a *DuplicateError) is retried when the holder's lease
// expires, at least MinRetryDelay from now, plus up to a tenth more of
// random jitter so that duplicates do not all return at once.
//
// A task over its concurrency limit (a *LimitError: it found every slot
// taken and none freed while it waited, see WithLimitWait) is retried
// after a random delay, uniform between MinRetryDelay and
// MaxLimitRetryDelay, or the earliest expiry among the slot holders, as
// its last attempt saw them, when that is sooner. Running holders extend
// their leases every TTL/3, so that expiry says when a slot frees only if
// a holder died; otherwise a slot frees when a task ends, which nothing
// knows in advance, and goes at once to a task waiting for it. Spreading
// the delay over the whole range sends the requeued tasks back one after
// another rather than all at once. With many long tasks waiting, give
// them a longer delay (check IsLimited in a RetryDelayFunc of your own
// before calling this one), or a longer WithLimitWait.
//
// Expiries are by the backend's clock and are compared with the local
// one. asynq schedules retries to the whole second and forwards them every
// Config.DelayedTaskCheckInterval (5s by default), so the retry may come
// up to that interval later, or, within the same second, earlier; an
// early retry finds the key busy and waits or is requeued again. That
// interval is why a limit's tasks wait for a slot (WithLimitWait) rather
// than count on their retries to fill it.
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
