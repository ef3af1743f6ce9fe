package gocronlock

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Defaults of NewLocker.
const (
	// DefaultPrefix namespaces the Locker's keys: "report" locks "gocron:report".
	DefaultPrefix = "gocron:"
	// DefaultWindow is the default done window (docs/gocron.md).
	DefaultWindow = time.Second
	// MaxPrefixBytes is the longest prefix accepted.
	MaxPrefixBytes = 256
)

// Option configures a Locker built by NewLocker.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	prefix   string
	window   time.Duration
	lockOpts []lock.Option
}

// WithWindow sets the done window: a run keeps off every other instance
// that fires the job within d of its own firing, by the backend's clock.
// 0 turns it off; a window needs a lock.Recorder.
func WithWindow(d time.Duration) Option {
	return optionFunc(func(c *config) { c.window = d })
}

// WithPrefix sets the namespace prepended to every job's name.
func WithPrefix(ns string) Option {
	return optionFunc(func(c *config) { c.prefix = ns })
}

// WithLockOptions passes options to lock.Hold, such as lock.WithTTL.
// lock.WithLimit does not apply.
func WithLockOptions(opts ...lock.Option) Option {
	return optionFunc(func(c *config) { c.lockOpts = append(c.lockOpts, opts...) })
}

// newConfig applies opts over the defaults and checks them.
func newConfig(b lock.Backend, opts []Option) (config, error) {
	const op = "new_locker"
	c := config{prefix: DefaultPrefix, window: DefaultWindow}
	for _, o := range opts {
		if o == nil {
			return c, lockdriver.InvalidArgument(op, "nil option")
		}
		o.apply(&c)
	}
	_, isRecorder := b.(lock.Recorder)
	switch {
	case b == nil:
		return c, lockdriver.InvalidArgument(op, "lock backend is nil")
	case c.window < 0:
		return c, lockdriver.InvalidArgument(op, "window must not be negative")
	case c.window > 0 && c.window < time.Millisecond:
		return c, lockdriver.InvalidArgument(op, "window must be at least 1ms")
	case c.window > 0 && !isRecorder:
		return c, lockdriver.InvalidArgument(op,
			"a window needs a backend that implements lock.Recorder (WithWindow(0) turns it off)")
	case !utf8.ValidString(c.prefix):
		return c, lockdriver.InvalidArgument(op, "prefix must be valid UTF-8")
	case len(c.prefix) > MaxPrefixBytes:
		return c, lockdriver.InvalidArgument(op, "prefix exceeds "+strconv.Itoa(MaxPrefixBytes)+" bytes")
	}
	s, err := lock.Resolve(nil, c.lockOpts...)
	if err != nil {
		return c, err
	}
	if s.Limit > 0 {
		return c, lockdriver.InvalidArgument(op, "lock.WithLimit does not apply to a Locker: a job runs once at a time")
	}
	return c, nil
}
