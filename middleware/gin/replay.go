package ginlock

import (
	"time"

	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// WithReplay turns replay mode on: the first response to a key is stored
// for ttl and replayed to retries (guard.DefaultReplayTTL is a
// day). It needs WithScope or Unscoped. See docs/http.md.
func WithReplay(ttl time.Duration) Option { return set(settings.ReplayFor(ttl)) }

// WithFingerprint adds f's result to the replay fingerprint. Needs
// WithReplay.
func WithFingerprint(f FingerprintFunc) Option {
	return func(c *config) { c.Fingerprint = f; settings.Tuned("Fingerprint")(&c.S) }
}

// WithReplayStatuses sets which statuses are stored (default
// guard.DefaultReplayStatus).
func WithReplayStatuses(store func(status int) bool) Option {
	return set(settings.ReplayStatuses(store))
}

// WithReplayHeaders sets the response headers stored and replayed
// (default guard.DefaultReplayHeaders).
func WithReplayHeaders(names ...string) Option { return set(settings.ReplayHeaders(names...)) }

// WithReplayMaxBody sets the largest response body stored.
func WithReplayMaxBody(n int64) Option { return set(settings.ReplayMaxBody(n)) }

// WithReplayMaxRequestBody sets the largest request body accepted.
func WithReplayMaxRequestBody(n int64) Option { return set(settings.ReplayMaxRequestBody(n)) }
