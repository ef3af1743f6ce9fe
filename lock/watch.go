package lock

import (
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// Watch is what a wait knows of a key's holder besides its own attempts:
// lock/election's watcher is one. See WithWatch.
type Watch interface {
	// Changed receives when the holder may have changed.
	Changed() <-chan struct{}
	// Holder returns the holder's expiry as last known; zero when nobody
	// holds the key. known is false until the key was first read.
	Holder() (expiresAt time.Time, known bool)
}

// WithWatch makes a wait on a busy key follow w instead of a backoff: it
// attempts when w finds the key free, or just after the holder's expiry.
// Transient failures are retried on any Backend then. lock/election's
// candidates wait so, with no bound but their context.
func WithWatch(w Watch) Option { return optionFunc(func(c *config) { c.watch = &w }) }

// expiryMargin is how long after the holder's expiry a watching wait
// attempts, and the least wait between its attempts on a busy key: a
// local clock ahead of the backend's would otherwise spin.
const expiryMargin = 50 * time.Millisecond

// until is a watching wait's delay after contention: until the holder's
// expiry (the later of what the attempt found and what the Watch knows),
// plus expiryMargin; the queued poll interval when neither is known.
func (a *acquisition) until() time.Duration {
	exp := a.w.holderExp
	if cur, known := a.w.watch.Holder(); known && cur.After(exp) {
		exp = cur
	}
	if exp.IsZero() {
		return contract.QueuedPollInterval
	}
	return max(time.Until(exp)+expiryMargin, expiryMargin)
}

// woken is a watching wait's answer to a change of holder: attempt at
// once when the key is free; else move the timer to the new expiry,
// unless it is pacing transient failures.
func (a *acquisition) woken() (attempt bool) {
	if exp, known := a.w.watch.Holder(); known && exp.IsZero() {
		return true
	}
	if a.w.failures == 0 {
		a.resetTimer(a.until())
	}
	return false
}

// lockedUntil is the holder's expiry an ErrLocked error carries, or zero.
func lockedUntil(err error) time.Time {
	var le *LockedError
	if errors.As(err, &le) {
		return le.ExpiresAt
	}
	return time.Time{}
}
