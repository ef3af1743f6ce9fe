package election

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/event"
)

// campaignWait is how long a candidate keeps one place (one lock id) in
// the key's queue before it joins again with a new one; a queue entry
// needs a bound on its wait.
const campaignWait = 10 * time.Minute

// errRejoin ends a campaign that must start again with a new lock id.
var errRejoin = errors.New("election: campaign again")

// candidate is one campaign for a term of key: its attempts and its place
// in the key's queue.
type candidate struct {
	b   lock.Backend
	key string
	ttl time.Duration
	f   *follower

	try     func(ctx context.Context) (lock.Lease, error)
	id      string      // the lock id of every attempt; "" on a plain Backend
	qw      lock.Waiter // the place in the key's queue; nil when b has none
	unknown bool        // an attempt may have taken the lock without saying so

	failures  int       // transient failures in a row
	holderExp time.Time // the holder's expiry as the last attempt found it
}

// campaignAll campaigns until it wins a term, joining again with a new
// lock id whenever a campaign asks for it: one wait (lock.OpWait) for the
// hooks of b.
func campaignAll(ctx context.Context, b lock.Backend, key string, ttl time.Duration, f *follower) (lock.Lease, error) {
	return event.Wait(ctx, b, key, ttl, func(ctx context.Context) (lock.Lease, error) {
		for {
			l, err := campaign(ctx, b, key, ttl, f)
			if !errors.Is(err, errRejoin) || ctx.Err() != nil {
				return l, err
			}
		}
	})
}

// campaign waits for a term of key: granted by a release's hand-off,
// taken by an attempt when the known term ended, or when its expiry
// passed with no notice. It returns the term's lease, errRejoin, ctx's
// error, or a backend error that is not transient.
func campaign(ctx context.Context, b lock.Backend, key string, ttl time.Duration, f *follower) (lock.Lease, error) {
	c := &candidate{b: b, key: key, ttl: ttl, f: f}
	if err := c.join(); err != nil {
		return lock.Lease{}, err
	}
	l, err := c.run(ctx)
	c.leave(ctx, err == nil)
	return l, err
}

// join picks the attempt function and lock id, and joins the queue.
func (c *candidate) join() error {
	ib, ok := c.b.(lock.IDBackend)
	if !ok {
		c.try = func(ctx context.Context) (lock.Lease, error) { return c.b.Acquire(ctx, c.key, c.ttl) }
		return nil
	}
	id, err := ib.NewLockID(c.key)
	if err != nil {
		return err
	}
	c.id = id
	c.try = func(ctx context.Context) (lock.Lease, error) { return ib.AcquireID(ctx, c.key, id, c.ttl) }
	qw, err := ib.Join(c.key, id, 0, c.ttl, campaignWait)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil // no hand-offs: the attempts find the key free
	case err != nil:
		return err
	}
	c.qw, c.try = qw, qw.Attempt
	return nil
}

// leave gives the place in the queue up (releasing what the id may hold
// when the campaign failed: a release may have handed it the term at
// that moment), or releases an id whose attempt's outcome is unknown. It
// does so before it returns, for at most stopTimeout, so that a process
// that exits once Lead returned has handed such a term on; only what the
// bound cut short goes on in the background.
func (c *candidate) leave(ctx context.Context, took bool) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	switch {
	case c.qw != nil && took:
		c.qw.Leave(true)
	case c.qw != nil:
		if lw, ok := c.qw.(interface{ LeaveWait(context.Context) error }); ok {
			_ = lw.LeaveWait(lctx)
		} else {
			c.qw.Leave(false)
		}
	case !took && c.unknown && c.id != "":
		if err := c.b.Release(lctx, c.id); err != nil && lock.CodeOf(err).Transient() {
			go func() {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.ttl)
				defer cancel()
				_ = c.b.Release(rctx, c.id)
			}()
		}
	}
}
