package lock

import (
	"math/rand/v2"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// Retry is the schedule of the attempts of Acquire, Do and Hold on a busy
// key, and after transient failures on an [IDBackend]. Its zero value is
// the default: up to 10 retries, exponential backoff from 100ms with equal
// jitter, every delay clamped to the time left of the wait.
type Retry struct {
	MaxRetries int           // attempts after the first; 0: 10. A single attempt is WithWait(0).
	BaseDelay  time.Duration // the first delay; 0: 100ms
	MaxDelay   time.Duration // caps one delay; 0: no cap but the time left of the wait
	Fixed      bool          // wait BaseDelay every time instead of doubling it
	NoJitter   bool          // wait the delay itself instead of d/2 + rand(d/2)
}

// WithRetry sets the schedule of retries; the zero Retry is the default.
// The last WithRetry given wins as a whole: its zero fields take the
// defaults.
// Negative numbers are an InvalidArgument error.
func WithRetry(r Retry) Option { return optionFunc(func(c *config) { c.retry = r }) }

// check returns r's invalid-argument error, or nil.
func (r Retry) check() error {
	switch {
	case r.MaxRetries < 0:
		return invalid("config", "max retries must not be negative")
	case r.BaseDelay < 0 || r.MaxDelay < 0:
		return invalid("config", "delays must not be negative")
	}
	return nil
}

// withDefaults returns r with its zero counts and delays replaced by the
// defaults.
func (r Retry) withDefaults() Retry {
	if r.MaxRetries == 0 {
		r.MaxRetries = contract.DefaultMaxRetries
	}
	if r.BaseDelay == 0 {
		r.BaseDelay = contract.DefaultBaseDelay
	}
	return r
}

// delay is the wait after the given failed attempt (0-based), for r with
// its defaults in place.
func (r Retry) delay(attempt int) time.Duration {
	d := r.BaseDelay
	if !r.Fixed {
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
	if !r.NoJitter {
		d = d/2 + rand.N(d/2+1)
	}
	return d
}
