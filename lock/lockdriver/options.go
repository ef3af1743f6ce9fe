package lockdriver

import (
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// The defaults of lock.Do, lock.Hold and lock.Acquire, as in syncguard's
// lock() (where the wait is called timeout), for adapters that document or
// share them.
const (
	DefaultTTL            = contract.DefaultTTL            // WithTTL: 30s
	DefaultWait           = contract.DefaultWait           // WithWait: 5s
	DefaultMaxRetries     = contract.DefaultMaxRetries     // Retry.MaxRetries: 10
	DefaultBaseDelay      = contract.DefaultBaseDelay      // Retry.BaseDelay: 100ms
	DefaultReleaseTimeout = contract.DefaultReleaseTimeout // WithReleaseTimeout: 5s
)

// MaxLimit is the largest n that lock.WithLimit accepts: 10000.
const MaxLimit = contract.MaxLimit

// ValidateOptions returns the error that lock.Do, lock.Hold and
// lock.Acquire would return for opts, or nil: an adapter that passes
// options on rejects bad ones when it is built. It is lock.Resolve's.
func ValidateOptions(opts ...lock.Option) error {
	_, err := lock.Resolve(nil, opts...)
	return err
}

// ValidateLimit returns the error that lock.Do, lock.Hold and lock.Acquire
// would return, before any I/O, for lock.WithLimit(n) on b: n out of
// range, or b not a lock.IDBackend (which also matches
// errors.ErrUnsupported). A nil b is not checked.
func ValidateLimit(b lock.Backend, n int) error {
	_, err := lock.Resolve(b, lock.WithLimit(n))
	return err
}
