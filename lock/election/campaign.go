package election

import (
	"context"
	"math"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// A candidate waits with lock.Acquire, as any caller does, with these
// differences: no bound but its context, and a wait on a busy key that
// follows the shared watcher's view of the term (lock.WithWatch) rather
// than a backoff.
var (
	// forever is a candidate's wait.
	forever = lock.WithWait(time.Duration(math.MaxInt64))
	// campaignRetry paces attempts after transient failures: from 100ms,
	// doubling up to a second, without end.
	campaignRetry = lock.WithRetry(lock.Retry{MaxRetries: math.MaxInt, MaxDelay: time.Second})
)

// campaign waits for a term of key: granted by a release's hand-off, or
// taken by an attempt when f finds the key free or the term's expiry
// passed. It returns the term's lease, ctx's error, or a backend error
// that is not transient.
func campaign(ctx context.Context, b lock.Backend, key string, ttl time.Duration, f *follower) (lock.Lease, error) {
	return lock.Acquire(ctx, b, key, lock.WithTTL(ttl), forever, campaignRetry, lock.WithWatch(f.wake, f.holder))
}

// holder returns the known term's expiry, zero when nobody leads, and
// whether the term was ever known: lock.WithWatch's holder.
func (f *follower) holder() (time.Time, bool) {
	cur, known := f.state()
	if cur.Fence == "" {
		return time.Time{}, known
	}
	return cur.ExpiresAt, known
}
