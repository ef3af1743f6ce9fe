package ginlock

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/middleware/httpguard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// Option configures New: httpguard's options and those below.
type Option = httpguard.Option

// Types of the gin functions the options take.
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

// WithKeyFunc sets how the key is read from a request (required).
func WithKeyFunc(f KeyFunc) Option { return func(s *settings.Settings) { s.Key = settings.Of(f) } }

// WithScope puts the request's principal into every key. Replay needs
// it, or httpguard.Unscoped.
func WithScope(f ScopeFunc) Option { return func(s *settings.Settings) { s.Scope = settings.Of(f) } }

// WithFingerprint adds f's result to the replay fingerprint.
func WithFingerprint(f FingerprintFunc) Option {
	return func(s *settings.Settings) { s.Fingerprint, s.Tuned = settings.Of(f), "Fingerprint" }
}

// WithBusyHandler replaces DefaultBusyHandler.
func WithBusyHandler(h BusyHandler) Option {
	return func(s *settings.Settings) { s.Busy = settings.Of(h) }
}

// WithErrorHandler replaces DefaultErrorHandler.
func WithErrorHandler(h ErrorHandler) Option {
	return func(s *settings.Settings) { s.Error = settings.Of(h) }
}

// WithSkipper sends the requests f accepts on without a lock.
func WithSkipper(f func(c *gin.Context) bool) Option {
	return func(s *settings.Settings) { s.Skip = settings.Of(f) }
}
