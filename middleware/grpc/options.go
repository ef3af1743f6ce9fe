package grpclock

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// Option configures the interceptors and NewLimiter. Options of the HTTP
// adapters (httplock, ginlock) are other types and do not compile here.
type Option func(*setup)

// setup is what the options set: the settings every adapter shares and
// the gRPC functions.
type setup struct {
	s           settings.Settings
	scope       ScopeFunc
	fingerprint FingerprintFunc
	stores      func(codes.Code) bool
}

// set is the option that applies f to the shared settings.
func set(f settings.Set) Option { return func(o *setup) { f(&o.s) } }

// Types of the functions the constructors and options take.
type (
	// KeyFunc returns the lock key of a call, from its context (incoming
	// metadata, grpc.Method, what interceptors in front put there) and
	// its request message (nil for a stream and for NewLimiter). An
	// error, or "", is answered InvalidArgument.
	KeyFunc func(ctx context.Context, req any) (string, error)
	// ScopeFunc returns the call's authenticated principal, as the
	// authentication interceptor in front put it in ctx. An error, or "",
	// is answered Unauthenticated.
	ScopeFunc func(ctx context.Context) (string, error)
	// FingerprintFunc returns the application's part of the replay
	// fingerprint, such as the tenant.
	FingerprintFunc func(ctx context.Context, req any) (string, error)
)

// WithScope puts the call's principal into every key, so two principals
// never share a lock or a stored response. Replay needs it, or
// Unscoped.
func WithScope(f ScopeFunc) Option {
	return func(o *setup) { o.scope = f; settings.Scoped(f != nil)(&o.s) }
}

// Unscoped says that replay runs without a scope, for public methods.
func Unscoped() Option { return set(settings.NoScope()) }

// WithTTL sets the lease duration (guard.DefaultTTL by default, at
// least guard.MinTTL), and NewLimiter's window.
func WithTTL(d time.Duration) Option { return set(settings.LeaseTTL(d)) }

// WithLimit makes the key a concurrency limit of n calls at once (the
// rest get ResourceExhausted), or NewLimiter's calls per window. It
// needs a lock.IDBackend.
func WithLimit(n int) Option { return set(settings.Slots(n)) }

// WithWait sets how long a call waits for a busy key (default 0).
func WithWait(d time.Duration) Option { return set(settings.WaitFor(d)) }

// WithPrefix prepends ns verbatim to every key.
func WithPrefix(ns string) Option { return set(settings.Prefix(ns)) }

// WithRouteScope sets whether keys include the full method name
// (default: on, off for limits).
func WithRouteScope(on bool) Option { return set(settings.Routes(on)) }

// WithFailOpen runs the handler without a lease when the backend fails.
func WithFailOpen(open bool) Option { return set(settings.Open(open)) }

// WithBackendTimeout bounds each call to the backend (default
// guard.DefaultBackendTimeout): a call whose backend call is
// unanswered in d is refused Unavailable, whatever its wait.
func WithBackendTimeout(d time.Duration) Option { return set(settings.Timeout(d)) }

// WithLockOptions passes options to lock.Do.
func WithLockOptions(opts ...lock.Option) Option { return set(settings.Lock(opts...)) }

// WithReplay turns replay mode on (UnaryServerInterceptor only): the
// first response, metadata and status of a key are stored for ttl and
// replayed to its duplicates. It needs WithScope or Unscoped.
func WithReplay(ttl time.Duration) Option { return set(settings.ReplayFor(ttl)) }

// WithReplayCodes sets which status codes replay stores (default
// DefaultReplayCode). Needs WithReplay.
func WithReplayCodes(store func(codes.Code) bool) Option {
	return func(o *setup) { o.stores = store; settings.Tuned("Stores")(&o.s) }
}

// WithReplayHeaders sets the header and trailer metadata keys stored and
// replayed (default: all but gRPC's own). Needs WithReplay.
func WithReplayHeaders(names ...string) Option { return set(settings.ReplayHeaders(names...)) }

// WithReplayMaxBody sets the largest response message stored.
func WithReplayMaxBody(n int64) Option { return set(settings.ReplayMaxBody(n)) }

// WithReplayMaxRequestBody sets the largest request message accepted in
// replay mode.
func WithReplayMaxRequestBody(n int64) Option { return set(settings.ReplayMaxRequestBody(n)) }

// WithFingerprint adds f's result to the replay fingerprint. Needs
// WithReplay.
func WithFingerprint(f FingerprintFunc) Option {
	return func(o *setup) { o.fingerprint = f; settings.Tuned("Fingerprint")(&o.s) }
}

// DefaultReplayCode reports whether a call ending with code is stored by
// default: OK and the answers a retry cannot change (InvalidArgument,
// NotFound, AlreadyExists, PermissionDenied, FailedPrecondition,
// OutOfRange). Codes a retry may change are not stored.
func DefaultReplayCode(code codes.Code) bool {
	switch code {
	case codes.OK, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists,
		codes.PermissionDenied, codes.FailedPrecondition, codes.OutOfRange:
		return true
	}
	return false
}
