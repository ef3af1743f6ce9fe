package lock

import (
	"math/rand/v2"
	"time"
)

// Retry is the schedule of the attempts of Acquire, Do and Hold on a busy
// key (and after transient failures, on an [IDBackend]), within the wait
// ([WithWait]). Its zero value is the default schedule: up to
// [DefaultMaxRetries] retries, exponential backoff from [DefaultBaseDelay]
// with equal jitter, every delay clamped to the time left of the wait.
type Retry struct {
	MaxRetries int           // attempts after the first; 0: DefaultMaxRetries (10). A single attempt is WithWait(0).
	BaseDelay  time.Duration // the first delay; 0: DefaultBaseDelay (100ms)
	MaxDelay   time.Duration // caps one delay; 0: no cap but the time left of the wait
	Backoff    Backoff       // BackoffExponential (the zero value) or BackoffFixed
	Jitter     Jitter        // JitterEqual (the zero value), JitterFull or JitterNone
}

// WithRetry sets the schedule of retries (default: the zero Retry). The
// last WithRetry given wins, as a whole: fields left zero in it take their
// defaults, not the values of an earlier WithRetry. Negative numbers and
// unknown Backoff or Jitter values are an InvalidArgument error.
func WithRetry(r Retry) Option { return optionFunc(func(c *config) { c.retry = r }) }

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

// check returns r's invalid-argument error, or nil.
func (r Retry) check() error {
	switch {
	case r.MaxRetries < 0:
		return invalid("config", "max retries must not be negative")
	case r.BaseDelay < 0 || r.MaxDelay < 0:
		return invalid("config", "delays must not be negative")
	case r.Backoff != BackoffExponential && r.Backoff != BackoffFixed:
		return invalid("config", "unknown backoff")
	case r.Jitter != JitterEqual && r.Jitter != JitterFull && r.Jitter != JitterNone:
		return invalid("config", "unknown jitter")
	}
	return nil
}

// withDefaults returns r with its zero counts and delays replaced by the
// defaults.
func (r Retry) withDefaults() Retry {
	if r.MaxRetries == 0 {
		r.MaxRetries = DefaultMaxRetries
	}
	if r.BaseDelay == 0 {
		r.BaseDelay = DefaultBaseDelay
	}
	return r
}

// delay is the wait after the given failed attempt (0-based), for r with
// its defaults in place.
func (r Retry) delay(attempt int) time.Duration {
	d := r.BaseDelay
	if r.Backoff == BackoffExponential {
		for i := 0; i < attempt && d < time.Hour; i++ {
			d *= 2
		}
	}
	if r.MaxDelay > 0 && d > r.MaxDelay {
		d = r.MaxDelay
	}
	if d <= 0 {
		return 0
	}
	switch r.Jitter {
	case JitterEqual:
		d = d/2 + rand.N(d/2+1)
	case JitterFull:
		d = rand.N(d + 1)
	}
	return d
}
