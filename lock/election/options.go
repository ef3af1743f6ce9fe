package election

import (
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Option configures Lead, and the adapters that run it: WithTTL,
// WithHeartbeat and WithReleaseErrorHandler. Later options override
// earlier ones; a nil Option is ignored.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is what Lead's options set.
type config struct {
	ttl            time.Duration
	heartbeat      lock.Heartbeat
	onReleaseError func(lock.Lease, error)
	releaseError   bool // WithReleaseErrorHandler was given
}

// WithTTL sets the TTL of a term's lease, at least MinTTL; 30s by default.
// It is the failover time after a leader's crash.
func WithTTL(d time.Duration) Option { return optionFunc(func(c *config) { c.ttl = d }) }

// WithHeartbeat sets the heartbeat that keeps a term alive, as
// lock.WithHeartbeat does for a lock: its Interval is at most half the
// TTL (0: a third of it), and its OnExtend and OnError are called as
// lock.Keep calls them. A term's heartbeat is always Unbatched: its
// extensions carry the values of Lead's context, such as a span.
func WithHeartbeat(h lock.Heartbeat) Option {
	return optionFunc(func(c *config) { c.heartbeat = h })
}

// WithReleaseErrorHandler sets the function told of a failed release of
// a term, as lock.WithReleaseErrorHandler does for a lock; the default
// logs a warning, nil ignores it.
func WithReleaseErrorHandler(f func(l lock.Lease, err error)) Option {
	return optionFunc(func(c *config) { c.onReleaseError, c.releaseError = f, true })
}

// TermTTL returns the TTL of the terms Lead holds with opts: WithTTL's,
// else the default. An adapter sizes its own leases with it; Validate
// tells whether opts are valid.
func TermTTL(opts ...Option) time.Duration { return newConfig(opts).ttl }

// newConfig returns what opts set, defaults filled in.
func newConfig(opts []Option) config {
	c := config{ttl: lockdriver.DefaultTTL}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	return c
}

// check returns the error for a bad setting of c, or nil.
func (c config) check(op string) error {
	var msg string
	switch {
	case c.ttl < MinTTL:
		msg = "ttl must be at least 1s (election.MinTTL): a shorter term cannot be kept alive"
	case c.heartbeat.Interval < 0:
		msg = "heartbeat interval must not be negative"
	case c.heartbeat.Interval > c.ttl/2:
		msg = "heartbeat interval must be at most half the ttl, so that one failed extension does not lose the term"
	default:
		return nil
	}
	return lockdriver.InvalidArgument(op, msg)
}

// holdOptions are the options of lock.Hold for term l, which the
// candidate holds already: c's, and a release bounded by stopTimeout.
func (c config) holdOptions(l lock.Lease, hb lock.Heartbeat) []lock.Option {
	opts := []lock.Option{lock.WithLease(l), lock.WithTTL(c.ttl), lock.WithHeartbeat(hb), lock.WithReleaseTimeout(stopTimeout)}
	if c.releaseError {
		opts = append(opts, lock.WithReleaseErrorHandler(c.onReleaseError))
	}
	return opts
}
