package asynqlock

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/hibiken/asynq"
	"go.opentelemetry.io/otel/trace"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Defaults of New.
const (
	// DefaultPrefix namespaces every key unless WithPrefix says otherwise.
	DefaultPrefix = "asynq:"
	// DefaultTTL is the lease duration when WithTTL is not given.
	DefaultTTL = lockdriver.DefaultTTL
	// MinTTL is the shortest lease accepted.
	MinTTL = 3 * time.Millisecond
	// MaxPrefixBytes is the longest prefix accepted.
	MaxPrefixBytes = 256
	// ReleaseTimeout bounds the release after the handler returns.
	ReleaseTimeout = lockdriver.DefaultReleaseTimeout
)

// KeyFunc derives the lock key of a task. An error or an invalid key
// fails the task with ErrInvalidKey.
type KeyFunc func(ctx context.Context, t *asynq.Task) (string, error)

// Policy says what happens to a task whose key is busy.
type Policy int

// The policies.
const (
	// Requeue, the default, fails the task with a *DuplicateError, so asynq
	// retries it.
	Requeue Policy = iota
	// Drop removes the task: its error also matches asynq.RevokeTask.
	Drop
)

// String returns "requeue" or "drop".
func (p Policy) String() string {
	switch p {
	case Requeue:
		return "requeue"
	case Drop:
		return "drop"
	}
	return "Policy(" + itoa(int(p)) + ")"
}

// Option configures a Guard built by New.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	keyFunc   KeyFunc
	prefix    string
	prefixSet bool // WithPrefix was given
	ttl       time.Duration
	policy    Policy
	doneTTL   time.Duration
	limit     int // WithLimit's n; 0 when not given
	limitSet  bool
	limitWait time.Duration // WithLimitWait's d
	waitSet   bool          // WithLimitWait was given
	onRelease func(lock.Lease, error)
	lockOpts  []lock.Option

	tracerProvider trace.TracerProvider // WithTracerProvider's
}

// WithKeyFunc sets how the lock key is derived from a task: DefaultKey by
// default, or TypeKey with WithLimit.
func WithKeyFunc(f KeyFunc) Option {
	return optionFunc(func(c *config) { c.keyFunc = f })
}

// WithPrefix sets the namespace prepended to every key.
func WithPrefix(ns string) Option {
	return optionFunc(func(c *config) { c.prefix, c.prefixSet = ns, true })
}

// WithTTL sets the lease duration, DefaultTTL by default.
func WithTTL(d time.Duration) Option {
	return optionFunc(func(c *config) { c.ttl = d })
}

// WithPolicy sets what happens to a task whose key is busy.
func WithPolicy(p Policy) Option {
	return optionFunc(func(c *config) { c.policy = p })
}

// WithDoneTTL marks a key done for d after a successful run: a task with
// the key arriving within d is dropped. It needs a lock.Recorder.
func WithDoneTTL(d time.Duration) Option {
	return optionFunc(func(c *config) { c.doneTTL = d })
}

// WithReleaseErrorHandler sets the function told about a failed release.
func WithReleaseErrorHandler(f func(l lock.Lease, err error)) Option {
	return optionFunc(func(c *config) { c.onRelease = f })
}

// WithLockOptions passes options to lock.Do, such as lock.WithWait. The
// Guard's own settings win.
func WithLockOptions(opts ...lock.Option) Option {
	return optionFunc(func(c *config) { c.lockOpts = append(c.lockOpts, opts...) })
}

// newConfig applies opts over the defaults and validates the result.
func newConfig(b lock.Backend, opts []Option) (config, lock.Recorder, error) {
	c := config{ttl: DefaultTTL, limitWait: DefaultLimitWait, onRelease: logReleaseError}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if !c.prefixSet {
		c.prefix = DefaultPrefix
		if c.limitSet {
			c.prefix = DefaultLimitPrefix
		}
	}
	if err := c.checkLimit(b); err != nil {
		return c, nil, err
	}
	recorder, _ := b.(lock.Recorder)
	switch {
	case b == nil:
		return c, nil, lockdriver.InvalidArgument("config", "nil lock backend")
	case c.ttl < MinTTL:
		return c, nil, lockdriver.InvalidArgument("config", "TTL must be at least "+MinTTL.String())
	case c.policy != Requeue && c.policy != Drop:
		return c, nil, lockdriver.InvalidArgument("config", "unknown policy")
	case c.doneTTL < 0:
		return c, nil, lockdriver.InvalidArgument("config", "done TTL must not be negative")
	case c.doneTTL > 0 && c.doneTTL < time.Millisecond:
		return c, nil, lockdriver.InvalidArgument("config", "done TTL must be at least 1ms")
	case c.doneTTL > 0 && recorder == nil:
		return c, nil, lockdriver.InvalidArgument("config",
			"done TTL needs a backend that implements lock.Recorder (a decorator must implement it too)")
	case !utf8.ValidString(c.prefix):
		return c, nil, lockdriver.InvalidArgument("config", "prefix must be valid UTF-8")
	case len(c.prefix) > MaxPrefixBytes:
		return c, nil, lockdriver.InvalidArgument("config", "prefix exceeds "+itoa(MaxPrefixBytes)+" bytes")
	}
	if err := lockdriver.ValidateOptions(c.lockOpts...); err != nil {
		return c, nil, err
	}
	if c.onRelease == nil {
		c.onRelease = func(lock.Lease, error) {}
	}
	if c.doneTTL == 0 {
		recorder = nil
	}
	return c, recorder, nil
}
