package election

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/event"
)

// retryDelays are the waits after transient failures of attempts.
var retryDelays = []time.Duration{100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second}

// run attempts, and between attempts waits for a hand-off, a change of
// the term, its timer or the end of ctx.
func (c *candidate) run(ctx context.Context) (lock.Lease, error) {
	rejoin := time.NewTimer(campaignWait)
	defer rejoin.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var granted <-chan lock.Lease
	if c.qw != nil {
		granted = c.qw.Granted()
	}
	for attempt := true; ; {
		if attempt {
			l, wait, err := c.attempt(ctx)
			if err != nil || l.ID != "" {
				return l, err
			}
			timer.Reset(wait)
		}
		attempt = false
		select {
		case g := <-granted:
			if g.ID != "" {
				event.Granted(ctx, c.b, g)
				return g, nil
			}
			attempt = true // a missed hand-off, or the subscription is new
		case <-c.f.wake:
			if cur, known := c.f.state(); known && cur.Fence == "" {
				attempt = true // nobody leads
			} else if c.failures == 0 {
				timer.Reset(c.until()) // the term moved on
			}
		case <-timer.C:
			attempt = true
		case <-rejoin.C:
			return lock.Lease{}, errRejoin
		case <-ctx.Done():
			return lock.Lease{}, ctx.Err()
		}
	}
}

// attempt makes one attempt: the term's lease, or the wait before the
// next attempt, or an error that ends the campaign.
func (c *candidate) attempt(ctx context.Context) (lock.Lease, time.Duration, error) {
	l, err := c.try(ctx)
	switch {
	case err == nil:
		return l, 0, nil
	case errors.Is(err, lock.ErrLocked):
		c.failures, c.holderExp = 0, lockedUntil(err)
		return lock.Lease{}, c.until(), nil
	case ctx.Err() != nil:
		return lock.Lease{}, 0, ctx.Err()
	case errors.Is(err, lock.ErrNotHeld):
		return lock.Lease{}, 0, errRejoin // the id was released: it takes nothing any more
	case lock.CodeOf(err).Transient():
		c.unknown = true
		d := retryDelays[min(c.failures, len(retryDelays)-1)]
		c.failures++
		return lock.Lease{}, d, nil
	}
	return lock.Lease{}, 0, err
}

// expiryMargin is how long after a term's expiry a candidate attempts,
// and the least wait between its attempts on a held key (a local clock
// ahead of the server's would otherwise spin). A term's lease is gone at
// its expiry by the server's clock (the key expires with it), so a
// crashed leader's successor follows within the TTL and this margin.
const expiryMargin = 50 * time.Millisecond

// until is the wait before an attempt on a held key: until the known
// term's expiry (moved on by its notices) or the holder's expiry as the
// last attempt found it, whichever is later, plus expiryMargin;
// pollInterval when neither is known.
func (c *candidate) until() time.Duration {
	exp := c.holderExp
	if cur, known := c.f.state(); known && cur.ExpiresAt.After(exp) {
		exp = cur.ExpiresAt
	}
	if exp.IsZero() {
		return pollInterval
	}
	return max(time.Until(exp)+expiryMargin, expiryMargin)
}

// lockedUntil is the holder's expiry an ErrLocked error carries, or zero.
func lockedUntil(err error) time.Time {
	var le *lock.LockedError
	if errors.As(err, &le) {
		return le.ExpiresAt
	}
	return time.Time{}
}
