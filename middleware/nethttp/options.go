package httplock

import (
	"net/http"

	"github.com/syncguard-go/syncguard/middleware/httpguard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// Option configures New: httpguard's options and those below.
type Option = httpguard.Option

// Types of the net/http functions the options take.
type (
	// KeyFunc reads the lock key from a request.
	KeyFunc = httpguard.KeyFunc
	// ScopeFunc returns the request's authenticated principal, as the
	// authentication middleware in front established it. An error, or
	// "", is answered 401.
	ScopeFunc func(*http.Request) (string, error)
	// FingerprintFunc returns the application's part of the replay
	// fingerprint, such as the tenant.
	FingerprintFunc func(*http.Request) (string, error)
	// BusyHandler answers a busy key.
	BusyHandler = httpguard.BusyHandler
	// ErrorHandler answers a request refused for another reason.
	ErrorHandler = httpguard.ErrorHandler
)

// WithKeyFunc sets how the key is read from a request (required).
func WithKeyFunc(f KeyFunc) Option { return func(s *settings.Settings) { s.Key = settings.Of(f) } }

// WithScope puts the request's principal into every key, so two
// principals never share a lock or a stored response. Replay needs it,
// or Unscoped.
func WithScope(f ScopeFunc) Option { return func(s *settings.Settings) { s.Scope = settings.Of(f) } }

// WithFingerprint adds f's result to the replay fingerprint. Needs
// WithReplay.
func WithFingerprint(f FingerprintFunc) Option {
	return func(s *settings.Settings) { s.Fingerprint, s.Tuned = settings.Of(f), "Fingerprint" }
}

// WithBusyHandler replaces the answer to a busy key (default
// httpguard.DefaultBusyHandler).
func WithBusyHandler(h BusyHandler) Option {
	return func(s *settings.Settings) { s.Busy = settings.Of(h) }
}

// WithErrorHandler replaces the answer to a bad key or a failing backend
// (default httpguard.DefaultErrorHandler).
func WithErrorHandler(h ErrorHandler) Option {
	return func(s *settings.Settings) { s.Error = settings.Of(h) }
}

// WithSkipper sends the requests f accepts to the handler without a lock.
func WithSkipper(f func(*http.Request) bool) Option {
	return func(s *settings.Settings) { s.Skip = settings.Of(f) }
}

// FromPathValue reads the wildcard name of the ServeMux pattern that
// matched, such as "id" in "POST /orders/{id}".
func FromPathValue(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		v := r.PathValue(name)
		if v == "" {
			return "", httpguard.Missing("path value", name)
		}
		return v, nil
	}
}

// httpguard's options and key functions, under the names this package
// has always had.
var (
	WithPrefix               = httpguard.WithPrefix
	WithTTL                  = httpguard.WithTTL
	WithWait                 = httpguard.WithWait
	WithBackendTimeout       = httpguard.WithBackendTimeout
	WithFailOpen             = httpguard.WithFailOpen
	WithLockOptions          = httpguard.WithLockOptions
	WithRouteScope           = httpguard.WithRouteScope
	Unscoped                 = httpguard.Unscoped
	WithProblemTypeBase      = httpguard.WithProblemTypeBase
	WithLimit                = httpguard.WithLimit
	WithReplay               = httpguard.WithReplay
	WithReplayStatuses       = httpguard.WithReplayStatuses
	WithReplayHeaders        = httpguard.WithReplayHeaders
	WithReplayMaxBody        = httpguard.WithReplayMaxBody
	WithReplayMaxRequestBody = httpguard.WithReplayMaxRequestBody
	FromHeader               = httpguard.FromHeader
	FromIdempotencyKey       = httpguard.FromIdempotencyKey
	FromQuery                = httpguard.FromQuery
	Compose                  = httpguard.Compose[*http.Request]
	DefaultBusyHandler       = httpguard.DefaultBusyHandler
	DefaultErrorHandler      = httpguard.DefaultErrorHandler
)
