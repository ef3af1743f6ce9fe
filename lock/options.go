package lock

import (
	"context"
	"log/slog"
	"time"
)

// Defaults of [Do], [Hold] and [Acquire], as in syncguard's lock() (where
// the wait is called timeout).
const (
	// DefaultTTL is the lease duration when [WithTTL] is not given.
	DefaultTTL = 30 * time.Second
	// DefaultWait is how long a busy key is waited for when [WithWait] is
	// not given.
	DefaultWait = 5 * time.Second
	// DefaultMaxRetries is the most attempts after the first when
	// [Retry.MaxRetries] is zero.
	DefaultMaxRetries = 10
	// DefaultBaseDelay is the first retry delay when [Retry.BaseDelay] is
	// zero.
	DefaultBaseDelay = 100 * time.Millisecond
	// DefaultReleaseTimeout bounds a release when [WithReleaseTimeout] is
	// not given.
	DefaultReleaseTimeout = 5 * time.Second
)

// Option configures [Do], [Hold] and [Acquire]. The With functions of this
// package return them; later options override earlier ones.
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
	keep           []KeepOption
	limit          int  // WithLimit's n
	limitSet       bool // WithLimit was given
}

func newConfig(opts []Option) (config, error) {
	c := config{
		ttl:            DefaultTTL,
		wait:           DefaultWait,
		releaseTimeout: DefaultReleaseTimeout,
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
	case c.limitSet && (c.limit < 1 || c.limit > MaxLimit):
		return c, invalid("config", "limit must be between 1 and "+itoa(MaxLimit))
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

// ValidateOptions returns the error that Do, Hold and Acquire would return
// for opts (an [*Error] with [CodeInvalidArgument]), or nil, so that an
// adapter that passes options on can reject bad ones when it is built
// rather than on every call.
func ValidateOptions(opts ...Option) error {
	_, err := newConfig(opts)
	return err
}

// WithTTL sets the lease duration (default DefaultTTL, 30s); it must be
// positive, and 0 or less is an InvalidArgument error, as in every package
// of this module. Do and Hold keep the lease alive while the work runs, so
// the TTL bounds how long a crashed holder blocks others, not how long the
// work may take.
func WithTTL(d time.Duration) Option { return optionFunc(func(c *config) { c.ttl = d }) }

// WithWait bounds the total time spent waiting for a busy key (default
// DefaultWait, 5s); 0 means a single attempt. It does not bound a single
// round trip to the backend: that is the client's own timeout, or ctx.
// The middleware and job adapters take the same option under the same
// name, each with its own default.
func WithWait(d time.Duration) Option { return optionFunc(func(c *config) { c.wait = d }) }

// WithReleaseTimeout bounds the release that Do and Hold's release
// function perform (default 5s). The release runs under a context of its
// own, so a cancelled caller still releases.
func WithReleaseTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.releaseTimeout = d })
}

// WithReleaseErrorHandler sets the function told about a failed release by
// Do or Hold's release function; nil ignores them. It hears the first
// failure only: a transient one is then tried again in the background
// (see [Hold]); after any other the lease ends by its TTL. The default
// logs a warning through log/slog with the key's hash, never the raw key.
// A release that finds the lease already lost is not reported: that is a
// loss, returned as [ErrLeaseLost].
func WithReleaseErrorHandler(f func(l Lease, err error)) Option {
	return optionFunc(func(c *config) { c.onReleaseError = f })
}

// WithReleaseFunc replaces the release that Do and Hold perform, for
// callers that end a lease in a special way, such as lock.Recorder's
// ReleaseDone after a successful run. f gets the release context (not the
// caller's) and the outcome: nil when the work succeeded and the lease was
// kept, otherwise Do's function's error, the lease-lost error, or
// ErrFuncPanicked (Hold's release passes the lease-lost error or nil). Its
// error goes to the [WithReleaseErrorHandler] function like a failed
// Release, and an error matching ErrNotHeld counts as a loss. The default
// is Backend.Release(ctx, l.ID).
//
// f may be called more than once for one lease, with the same lease and
// outcome: a release that fails on a transient error is tried again in
// the background (see [Hold]), each try with a fresh context, until f
// returns nil, an error matching ErrNotHeld or a non-transient error, or
// the lease's TTL has passed. A try whose reply was lost may have released
// already, so f must be safe to repeat: a second run finding the lease
// gone returns ErrNotHeld, which ends the tries.
func WithReleaseFunc(f func(ctx context.Context, l Lease, err error) error) Option {
	return optionFunc(func(c *config) { c.release = f })
}

// WithKeepOptions passes options to the [Keep] heartbeat that Do and Hold
// run.
func WithKeepOptions(opts ...KeepOption) Option {
	return optionFunc(func(c *config) { c.keep = append(c.keep, opts...) })
}

func logReleaseError(l Lease, err error) {
	slog.Warn("syncguard: release failed; tried again in the background if transient, else the lease ends at its TTL",
		"key_hash", HashKey(l.Key), "fence", string(l.Fence), "error", err)
}
