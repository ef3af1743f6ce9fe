package asynqlock

import (
	"errors"
	"math/rand/v2"
	"time"

	"github.com/hibiken/asynq"
)

// MinRetryDelay is the shortest delay RetryDelay gives a busy duplicate.
const MinRetryDelay = 100 * time.Millisecond

// RetryDelay returns an asynq.RetryDelayFunc for asynq.Config: a busy
// duplicate (a *DuplicateError) is retried when the holder's lease
// expires, at least MinRetryDelay from now, plus up to a tenth more of
// random jitter so that duplicates do not all return at once; every other
// error gets fallback's delay (asynq.DefaultRetryDelayFunc when nil).
//
// The holder's expiry is by the backend's clock and is compared with the
// local one. asynq schedules retries to the whole second and forwards them
// every Config.DelayedTaskCheckInterval (5s by default), so the retry may
// come somewhat later, or, within the same second, earlier; an early retry
// finds the key busy and is requeued again.
func RetryDelay(fallback asynq.RetryDelayFunc) asynq.RetryDelayFunc {
	if fallback == nil {
		fallback = asynq.DefaultRetryDelayFunc
	}
	return func(n int, err error, t *asynq.Task) time.Duration {
		var d *DuplicateError
		if !errors.As(err, &d) || d.Done {
			return fallback(n, err, t)
		}
		wait := max(time.Until(d.ExpiresAt), MinRetryDelay)
		return wait + rand.N(wait/10+1)
	}
}
