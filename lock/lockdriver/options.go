package lockdriver

import (
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// The defaults of lock.Do, lock.Hold and lock.Acquire, for adapters.
const (
	DefaultTTL            = contract.DefaultTTL            // WithTTL: 30s
	DefaultWait           = contract.DefaultWait           // WithWait: 5s
	DefaultMaxRetries     = contract.DefaultMaxRetries     // Retry.MaxRetries: 10
	DefaultBaseDelay      = contract.DefaultBaseDelay      // Retry.BaseDelay: 100ms
	DefaultReleaseTimeout = contract.DefaultReleaseTimeout // WithReleaseTimeout: 5s
)

// MaxLimit is the largest n that lock.WithLimit accepts: 10000.
const MaxLimit = contract.MaxLimit

// ValidateOptions returns lock.Resolve's error for opts.
func ValidateOptions(opts ...lock.Option) error {
	_, err := lock.Resolve(nil, opts...)
	return err
}

// ValidateLimit returns the error of lock.WithLimit(n) on b (nil: not
// checked).
func ValidateLimit(b lock.Backend, n int) error {
	_, err := lock.Resolve(b, lock.WithLimit(n))
	return err
}

// TimeTolerance is syncguard's clock tolerance: a lease counts as live
// until TimeTolerance after its expiry.
const TimeTolerance = contract.TimeTolerance // 1s

// QueuedPollInterval is the longest a queued waiter goes without an
// attempt of its own.
const QueuedPollInterval = contract.QueuedPollInterval // 1s

// Extension returns b as T, an optional extension of lock.Backend (such
// as lock.IDBackend or rwlock.Backend), or the first backend under b's
// hooks (lock.WithHooks, whose result has an Unwrap method) that is one;
// ok is false when none is. An extension found under the hooks is called
// without them: run its operations through lock.Emit to have them seen.
func Extension[T any](b lock.Backend) (ext T, ok bool) {
	for b != nil {
		if ext, ok = b.(T); ok {
			return ext, true
		}
		u, isWrapper := b.(interface{ Unwrap() lock.Backend })
		if !isWrapper {
			break
		}
		b = u.Unwrap()
	}
	return ext, false
}
