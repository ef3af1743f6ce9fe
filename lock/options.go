package lock

import (
	"context"
	"log/slog"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// Option configures [Do], [Hold], [Acquire] and [Keep]. The With functions
// of this package return them; later options override earlier ones.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	ttl            time.Duration
	wait           time.Duration
	retry          Retry // WithRetry's; its defaults filled in by newConfig
	releaseTimeout time.Duration
	onReleaseError func(Lease, error)
	release        func(ctx context.Context, l Lease, err error) error
	heartbeat      Heartbeat
	limit          int32  // WithLimit's n
	limitSet       bool   // WithLimit was given
	watch          *Watch // WithWatch's
}

func newConfig(opts []Option) (config, error) {
	c := config{
		ttl:            contract.DefaultTTL,
		wait:           contract.DefaultWait,
		releaseTimeout: contract.DefaultReleaseTimeout,
		onReleaseError: logReleaseError,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	switch {
	case c.ttl <= 0:
		return c, invalid("config", "ttl must be positive")
	case c.wait < 0:
		return c, invalid("config", "wait must not be negative")
	case c.releaseTimeout <= 0:
		return c, invalid("config", "release timeout must be positive")
	case c.limitSet && (c.limit < 1 || c.limit > contract.MaxLimit):
		return c, invalid("config", "limit must be between 1 and "+itoa(contract.MaxLimit))
	}
	if err := c.retry.check(); err != nil {
		return c, err
	}
	c.retry = c.retry.withDefaults()
	if c.onReleaseError == nil {
		c.onReleaseError = func(Lease, error) {}
	}
	return c, nil
}

// WithTTL sets the lease duration (default 30s); it must be positive. Do
// and Hold keep the lease alive while the work runs, so the TTL bounds how
// long a crashed holder blocks others, not how long the work may take.
func WithTTL(d time.Duration) Option { return optionFunc(func(c *config) { c.ttl = d }) }

// WithWait bounds the total time spent waiting for a busy key (default
// 5s); 0 means a single attempt. It does not bound one round trip to the
// backend: that is the client's own timeout, or ctx.
func WithWait(d time.Duration) Option { return optionFunc(func(c *config) { c.wait = d }) }

// WithReleaseTimeout bounds the release of Do and Hold (default 5s), which
// runs under a context of its own, so a cancelled caller still releases.
func WithReleaseTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.releaseTimeout = d })
}

// WithReleaseErrorHandler sets the function told about the first failure
// of Do and Hold's release (nil ignores them; the default logs a warning
// with the key's hash). A release that finds the lease already lost is a
// loss, returned as [ErrLeaseLost], not reported here.
func WithReleaseErrorHandler(f func(l Lease, err error)) Option {
	return optionFunc(func(c *config) { c.onReleaseError = f })
}

// WithReleaseFunc replaces the release of Do and Hold (Backend.Release),
// such as with Recorder.ReleaseDone after a successful run. f gets the
// release's context and the outcome: nil, fn's error, the loss, or
// [ErrFuncPanicked]. A transient failure is tried again, so f must be safe
// to repeat; see docs/lock.md.
func WithReleaseFunc(f func(ctx context.Context, l Lease, err error) error) Option {
	return optionFunc(func(c *config) { c.release = f })
}

func logReleaseError(l Lease, err error) {
	slog.Warn("syncguard: release failed; tried again in the background if transient, else the lease ends at its TTL",
		"key_hash", contract.HashKey(l.Key), "fence", string(l.Fence), "error", err)
}
