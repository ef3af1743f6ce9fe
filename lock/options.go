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
	backendTimeout time.Duration // 0: none
	onReleaseError func(Lease, error)
	release        func(ctx context.Context, l Lease, err error) error
	heartbeat      Heartbeat
	limit          int32  // WithLimit's n
	limitSet       bool   // WithLimit was given
	watch          *watch // WithWatch's
	lease          *Lease // WithLease's
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
	case c.backendTimeout < 0:
		return c, invalid("config", "backend timeout must not be negative")
	case c.limitSet && (c.limit < 1 || c.limit > contract.MaxLimit):
		return c, invalid("config", "limit must be between 1 and "+itoa(contract.MaxLimit))
	case c.watch != nil && c.watch.holder == nil:
		return c, invalid("config", "watch needs a holder function")
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

// WithTTL sets the lease duration, 30s by default. Do and Hold keep the
// lease alive, so the TTL bounds how long a crashed holder blocks others.
func WithTTL(d time.Duration) Option { return optionFunc(func(c *config) { c.ttl = d }) }

// WithWait bounds the time spent waiting for a busy key, 5s by
// default; 0
// means a single attempt.
func WithWait(d time.Duration) Option { return optionFunc(func(c *config) { c.wait = d }) }

// WithReleaseTimeout bounds the release of Do and Hold, 5s by default.
func WithReleaseTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.releaseTimeout = d })
}

// WithBackendTimeout bounds each call an acquisition makes to the
// backend; 0, the default, leaves it to ctx. A call unanswered in d ends
// the acquisition with a CodeNetworkTimeout error, whatever is left of
// the wait: the wait is for a busy key, not for a silent backend.
func WithBackendTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.backendTimeout = d })
}

// WithReleaseErrorHandler sets the function told of the first failure of
// Do and Hold's release; the default logs a warning, nil ignores it. A
// lease found lost is returned as [ErrLeaseLost] instead.
func WithReleaseErrorHandler(f func(l Lease, err error)) Option {
	return optionFunc(func(c *config) { c.onReleaseError = f })
}

// WithReleaseFunc replaces the release of Do and Hold, such as by
// Recorder.ReleaseDone. f gets the outcome: nil, fn's error, the loss or
// [ErrFuncPanicked]. It may be tried again, so it must be safe to repeat.
func WithReleaseFunc(f func(ctx context.Context, l Lease, err error) error) Option {
	return optionFunc(func(c *config) { c.release = f })
}

// WithLease makes Do and Hold keep and release l, a lease the caller
// took on their key (such as by Recorder.AcquireRecord), instead of
// acquiring. Acquire refuses it.
func WithLease(l Lease) Option {
	return optionFunc(func(c *config) { c.lease = &l })
}

func logReleaseError(l Lease, err error) {
	slog.Warn("syncguard: release failed; tried again in the background if transient, else the lease ends at its TTL",
		"key_hash", contract.HashKey(l.Key), "fence", string(l.Fence), "error", err)
}
