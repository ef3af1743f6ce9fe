package lock

import (
	"context"
	"log/slog"
	"time"
)

// Defaults of [Do] and [Acquire], as in syncguard's lock().
const (
	DefaultTTL            = 30 * time.Second
	DefaultTimeout        = 5 * time.Second
	DefaultMaxRetries     = 10
	DefaultBaseDelay      = 100 * time.Millisecond
	DefaultReleaseTimeout = 5 * time.Second
)

// Backoff is how the wait between acquisition attempts grows.
type Backoff int

// The backoff strategies.
const (
	// BackoffExponential doubles the delay after every attempt (the default).
	BackoffExponential Backoff = iota
	// BackoffFixed waits the base delay every time.
	BackoffFixed
)

// Jitter is how a delay is randomised so contenders do not retry in step.
type Jitter int

// The jitter strategies.
const (
	// JitterEqual waits d/2 + rand(d/2) (the default).
	JitterEqual Jitter = iota
	// JitterFull waits rand(d).
	JitterFull
	// JitterNone waits d.
	JitterNone
)

// Option configures [Do] and [Acquire].
type Option func(*config)

type config struct {
	ttl            time.Duration
	timeout        time.Duration
	maxRetries     int
	baseDelay      time.Duration
	maxDelay       time.Duration
	backoff        Backoff
	jitter         Jitter
	releaseTimeout time.Duration
	onReleaseError func(Lease, error)
	release        func(ctx context.Context, l Lease, err error) error
	keep           []KeepOption
}

func newConfig(opts []Option) (config, error) {
	c := config{
		ttl:            DefaultTTL,
		timeout:        DefaultTimeout,
		maxRetries:     DefaultMaxRetries,
		baseDelay:      DefaultBaseDelay,
		releaseTimeout: DefaultReleaseTimeout,
		onReleaseError: logReleaseError,
	}
	for _, o := range opts {
		o(&c)
	}
	switch {
	case c.ttl <= 0:
		return c, invalid("config", "ttl must be positive")
	case c.timeout < 0:
		return c, invalid("config", "timeout must not be negative")
	case c.maxRetries < 0:
		return c, invalid("config", "max retries must not be negative")
	case c.baseDelay < 0 || c.maxDelay < 0:
		return c, invalid("config", "delays must not be negative")
	case c.releaseTimeout <= 0:
		return c, invalid("config", "release timeout must be positive")
	case c.backoff != BackoffExponential && c.backoff != BackoffFixed:
		return c, invalid("config", "unknown backoff")
	case c.jitter != JitterEqual && c.jitter != JitterFull && c.jitter != JitterNone:
		return c, invalid("config", "unknown jitter")
	}
	if c.onReleaseError == nil {
		c.onReleaseError = func(Lease, error) {}
	}
	return c, nil
}

// WithTTL sets the lease duration (default 30s). Do keeps the lease alive
// while its function runs, so the TTL bounds how long a crashed holder
// blocks others, not how long the work may take.
func WithTTL(d time.Duration) Option { return func(c *config) { c.ttl = d } }

// WithTimeout bounds the total time spent waiting for a busy key (default
// 5s); 0 means a single attempt. It does not bound a single round trip to
// the backend: that is the client's own timeout, or ctx.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithMaxRetries bounds the attempts after the first (default 10).
func WithMaxRetries(n int) Option { return func(c *config) { c.maxRetries = n } }

// WithBaseDelay sets the first retry delay (default 100ms).
func WithBaseDelay(d time.Duration) Option { return func(c *config) { c.baseDelay = d } }

// WithMaxDelay caps a single retry delay (default: no cap but the time
// left before the timeout).
func WithMaxDelay(d time.Duration) Option { return func(c *config) { c.maxDelay = d } }

// WithBackoff selects the backoff strategy (default BackoffExponential).
func WithBackoff(b Backoff) Option { return func(c *config) { c.backoff = b } }

// WithJitter selects the jitter strategy (default JitterEqual).
func WithJitter(j Jitter) Option { return func(c *config) { c.jitter = j } }

// WithReleaseTimeout bounds the release that Do performs after its function
// returns (default 5s). The release runs under a context of its own, so a
// cancelled caller still releases.
func WithReleaseTimeout(d time.Duration) Option {
	return func(c *config) { c.releaseTimeout = d }
}

// OnReleaseError sets the function told about a failed release after Do's
// function returned (the lease then ends by its TTL). The default logs a
// warning through log/slog with the key's hash, never the raw key. A
// release that finds the lease already lost is not reported.
func OnReleaseError(f func(l Lease, err error)) Option {
	return func(c *config) { c.onReleaseError = f }
}

// WithReleaseFunc replaces the release that Do performs after its
// function, for callers that end a lease in a special way, such as
// lock.Completer's ReleaseDone after a successful run. f gets Do's release
// context (not the caller's) and the outcome: nil when fn succeeded and
// the lease was kept, otherwise fn's error, the lease-lost error, or
// ErrFuncPanicked. Its error goes to OnReleaseError like a failed
// Release. The default is Backend.Release(ctx, l.ID).
func WithReleaseFunc(f func(ctx context.Context, l Lease, err error) error) Option {
	return func(c *config) { c.release = f }
}

// WithKeepOptions passes options to the [Keep] heartbeat that Do runs.
func WithKeepOptions(opts ...KeepOption) Option {
	return func(c *config) { c.keep = append(c.keep, opts...) }
}

func logReleaseError(l Lease, err error) {
	slog.Warn("syncguard: release failed; the lease will end at its TTL",
		"key_hash", HashKey(l.Key), "fence", string(l.Fence), "error", err)
}
