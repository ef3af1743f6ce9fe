package lock

import (
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// WithWatch makes a wait on a busy key follow a watcher of its holder
// instead of a backoff: changed receives when the holder may have
// changed, and holder returns the holder's expiry, zero when the key is
// free, with known false until the key was first read. The wait attempts
// when the key is found free or the holder's expiry passed. It then
// retries transient failures on any Backend. lock/election's candidates
// wait so.
func WithWatch(changed <-chan struct{}, holder func() (expiresAt time.Time, known bool)) Option {
	return optionFunc(func(c *config) { c.watch = &watch{changed: changed, holder: holder} })
}

// watch is WithWatch's watcher.
type watch struct {
	changed <-chan struct{}
	holder  func() (expiresAt time.Time, known bool)
}

// expiryMargin is how long after the holder's expiry a watching wait
// attempts, and its least wait: clocks differ.
const expiryMargin = 50 * time.Millisecond

// until is a watching wait's delay after contention: until the later
// known expiry of the holder, plus expiryMargin.
func (a *acquisition) until() time.Duration {
	exp := a.w.holderExp
	if cur, known := a.w.watch.holder(); known && cur.After(exp) {
		exp = cur
	}
	if exp.IsZero() {
		return contract.QueuedPollInterval
	}
	return max(time.Until(exp)+expiryMargin, expiryMargin)
}

// woken reports whether a change of holder calls for an attempt at once:
// the key is free. Else it moves the timer to the new expiry.
func (a *acquisition) woken() (attempt bool) {
	if exp, known := a.w.watch.holder(); known && exp.IsZero() {
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
