package grpclock

import (
	"context"

	"google.golang.org/grpc/codes"

	"github.com/syncguard-go/syncguard/middleware/httpguard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// Option configures the interceptors and NewLimiter: httpguard's options
// and those below.
type Option = httpguard.Option

// Types of the functions the options take.
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

// WithKeyFunc sets how the key is read from a call (required).
func WithKeyFunc(f KeyFunc) Option { return func(s *settings.Settings) { s.Key = settings.Of(f) } }

// WithScope puts the call's principal into every key, so two principals
// never share a lock or a stored response. Replay needs it, or
// httpguard.Unscoped.
func WithScope(f ScopeFunc) Option { return func(s *settings.Settings) { s.Scope = settings.Of(f) } }

// WithFingerprint adds f's result to the replay fingerprint. Needs
// WithReplay.
func WithFingerprint(f FingerprintFunc) Option {
	return func(s *settings.Settings) { s.Fingerprint, s.Tuned = settings.Of(f), "Fingerprint" }
}

// WithReplayCodes sets which status codes replay stores (default
// DefaultReplayCode). Needs WithReplay.
func WithReplayCodes(store func(codes.Code) bool) Option {
	return func(s *settings.Settings) { s.Stores, s.Tuned = settings.Of(store), "Stores" }
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
