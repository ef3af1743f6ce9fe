package lockdriver

import (
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// The defaults of lock.Do, lock.Hold and lock.Acquire, as in syncguard's
// lock() (where the wait is called timeout), for adapters that document or
// share them.
const (
	DefaultTTL            = 30 * time.Second       // WithTTL
	DefaultWait           = 5 * time.Second        // WithWait
	DefaultMaxRetries     = 10                     // Retry.MaxRetries
	DefaultBaseDelay      = 100 * time.Millisecond // Retry.BaseDelay
	DefaultReleaseTimeout = 5 * time.Second        // WithReleaseTimeout
)

// MaxLimit is the largest n that lock.WithLimit accepts.
const MaxLimit = 10000

// ValidateOptions returns the error that lock.Do, lock.Hold and
// lock.Acquire would return for opts (a *lock.Error with
// lock.CodeInvalidArgument), or nil, so that an adapter that passes
// options on rejects bad ones when it is built rather than on every call.
func ValidateOptions(opts ...lock.Option) error { return contract.ValidateOptions(opts) }

// ValidateLimit returns the error that lock.Do, lock.Hold and lock.Acquire
// would return, before any I/O, for lock.WithLimit(n) on b (a *lock.Error
// with lock.CodeInvalidArgument: n out of range, or b not a
// lock.IDBackend, which also matches errors.ErrUnsupported), or nil. A nil
// b is not checked.
func ValidateLimit(b lock.Backend, n int) error { return contract.ValidateLimit(b, n) }
