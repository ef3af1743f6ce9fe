package httplock

import (
	"net/http"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// Option configures New. Options of other adapters (ginlock, grpclock)
// are other types and do not compile here.
type Option func(*config)

// config is what the options set: the settings every adapter shares and
// the net/http functions.
type config = settings.Request[*http.Request, BusyHandler, ErrorHandler]

// set is the option that applies f to the shared settings.
func set(f settings.Set) Option { return func(c *config) { f(&c.S) } }

// Types of the net/http functions New and the options take.
type (
	// KeyFunc reads the lock key from a request.
	KeyFunc = guard.KeyFunc
	// ScopeFunc returns the request's authenticated principal, as the
	// authentication middleware in front established it. An error, or
	// "", is answered 401.
	ScopeFunc func(*http.Request) (string, error)
	// FingerprintFunc returns the application's part of the replay
	// fingerprint, such as the tenant.
	FingerprintFunc func(*http.Request) (string, error)
	// BusyHandler answers a busy key.
	BusyHandler = guard.BusyHandler
	// ErrorHandler answers a request refused for another reason.
	ErrorHandler = guard.ErrorHandler
)

// WithTTL sets the lease duration: guard.DefaultTTL by default, at
// least guard.MinTTL.
func WithTTL(d time.Duration) Option { return set(settings.LeaseTTL(d)) }

// WithWait sets how long a request waits for a busy key (default 0).
func WithWait(d time.Duration) Option { return set(settings.WaitFor(d)) }

// WithPrefix prepends ns verbatim to every key.
func WithPrefix(ns string) Option { return set(settings.Prefix(ns)) }

// WithRouteScope sets whether keys include the method and route pattern
// (default: on, off for limits).
func WithRouteScope(on bool) Option { return set(settings.Routes(on)) }

// WithBackendTimeout bounds each call to the backend (default
// guard.DefaultBackendTimeout): a request whose call is unanswered
// in d is refused as for a failing backend (503 with Retry-After),
// whatever its wait. The release is bounded by d too, and tried again in
// the background.
func WithBackendTimeout(d time.Duration) Option { return set(settings.Timeout(d)) }

// WithFailOpen runs the handler without a lease when the backend fails.
func WithFailOpen(open bool) Option { return set(settings.Open(open)) }

// WithLockOptions passes options to lock.Do.
func WithLockOptions(opts ...lock.Option) Option { return set(settings.Lock(opts...)) }

// WithLimit makes the key a concurrency limit of n slots: the rest get
// 429. It needs a lock.IDBackend.
func WithLimit(n int) Option { return set(settings.Slots(n)) }

// WithScope puts the request's principal into every key, so two
// principals never share a lock or a stored response. Replay needs it,
// or Unscoped.
func WithScope(f ScopeFunc) Option {
	return func(c *config) { c.Scope = f; settings.Scoped(f != nil)(&c.S) }
}

// Unscoped says that replay runs without a scope, for public endpoints.
func Unscoped() Option { return set(settings.NoScope()) }

// WithBusyHandler replaces the answer to a busy key (default
// guard.DefaultBusyHandler).
func WithBusyHandler(h BusyHandler) Option { return func(c *config) { c.Busy = h } }

// WithErrorHandler replaces the answer to a bad key or a failing backend
// (default guard.DefaultErrorHandler).
func WithErrorHandler(h ErrorHandler) Option { return func(c *config) { c.Error = h } }

// WithProblemTypeBase makes the default answers' problem types uri
// followed by their names.
func WithProblemTypeBase(uri string) Option { return set(settings.Problems(uri)) }

// WithSkipper sends the requests f accepts to the handler without a lock.
func WithSkipper(f func(*http.Request) bool) Option { return func(c *config) { c.Skip = f } }
