package ginlock

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// Option configures New. Options of other adapters (httplock, grpclock)
// are other types and do not compile here.
type Option func(*config)

// config is what the options set: the settings every adapter shares and
// the gin functions.
type config = settings.Request[*gin.Context, BusyHandler, ErrorHandler]

// set is the option that applies f to the shared settings.
func set(f settings.Set) Option { return func(c *config) { f(&c.S) } }

// Types of the gin functions New and the options take.
type (
	// KeyFunc reads the lock key from a request. An error, or "", is
	// answered 400 without calling the backend.
	KeyFunc func(c *gin.Context) (string, error)
	// ScopeFunc returns the request's authenticated principal. An
	// error, or "", is answered 401.
	ScopeFunc func(c *gin.Context) (string, error)
	// FingerprintFunc returns the application's part of the replay
	// fingerprint, such as the tenant.
	FingerprintFunc func(c *gin.Context) (string, error)
	// BusyHandler answers a busy key and aborts c. retryAfter is whole
	// seconds; err matches lock.ErrLocked.
	BusyHandler func(c *gin.Context, retryAfter time.Duration, err error)
	// ErrorHandler answers another refusal and aborts c.
	ErrorHandler func(c *gin.Context, err error)
)

// What is locked: the key's parts.

// WithPrefix prepends ns verbatim to every key.
func WithPrefix(ns string) Option { return set(settings.Prefix(ns)) }

// WithScope puts the request's principal into every key, so two
// principals never share a lock or a stored response. Replay needs it,
// or Unscoped.
func WithScope(f ScopeFunc) Option {
	return func(c *config) { c.Scope = f; settings.Scoped(f != nil)(&c.S) }
}

// Unscoped says that replay runs without a scope, for public endpoints.
func Unscoped() Option { return set(settings.NoScope()) }

// WithRouteScope sets whether keys include the method and the route
// (c.FullPath()); default: on, off for limits.
func WithRouteScope(on bool) Option { return set(settings.Routes(on)) }

// WithSkipper sends the requests f accepts on without a lock.
func WithSkipper(f func(c *gin.Context) bool) Option { return func(c *config) { c.Skip = f } }

// How long, and how many at once.

// WithTTL sets the lease duration: guard.DefaultTTL by default, at
// least guard.MinTTL.
func WithTTL(d time.Duration) Option { return set(settings.LeaseTTL(d)) }

// WithWait sets how long a request waits for a busy key (default 0).
func WithWait(d time.Duration) Option { return set(settings.WaitFor(d)) }

// WithLimit makes the key a concurrency limit of n slots: the rest get
// 429. It needs a lock.IDBackend.
func WithLimit(n int) Option { return set(settings.Slots(n)) }

// WithBackendTimeout bounds each call to the backend (default
// guard.DefaultBackendTimeout): a request whose call is unanswered
// in d is refused as for a failing backend (503), whatever its wait.
func WithBackendTimeout(d time.Duration) Option { return set(settings.Timeout(d)) }

// WithFailOpen runs the chain without a lease when the backend fails.
func WithFailOpen(open bool) Option { return set(settings.Open(open)) }

// WithLockOptions passes options to lock.Do.
func WithLockOptions(opts ...lock.Option) Option { return set(settings.Lock(opts...)) }
