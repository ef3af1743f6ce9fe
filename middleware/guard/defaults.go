package guard

import (
	"net/http"
	"slices"
	"time"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Defaults and bounds of the settings.
const (
	// DefaultTTL is the lease duration when none is set.
	DefaultTTL = lockdriver.DefaultTTL
	// MinTTL is the shortest lease accepted.
	MinTTL = 3 * time.Millisecond
	// WaitMaxDelay is the longest pause between attempts on a backend
	// without a waiter queue.
	WaitMaxDelay = 50 * time.Millisecond
	// DefaultBackendTimeout bounds each call to the backend when
	// WithBackendTimeout is not given.
	DefaultBackendTimeout = time.Second
	// UnavailableRetryAfter is the Retry-After of the default answer to a
	// failing or silent backend (503).
	UnavailableRetryAfter = time.Second
	// DefaultReplayTTL is a common replay TTL: 24 hours.
	DefaultReplayTTL = 24 * time.Hour
	// MinReplayTTL is the shortest replay TTL accepted.
	MinReplayTTL = time.Millisecond
	// DefaultReplayMaxBody is the largest response body stored.
	DefaultReplayMaxBody = 1 << 20
	// DefaultReplayMaxRequestBody is the largest request body read.
	DefaultReplayMaxRequestBody = 1 << 20
)

// Headers of replay mode, and the values of HeaderNotStored.
const (
	// HeaderReplayed marks a replayed response.
	HeaderReplayed = "Idempotent-Replayed"
	// HeaderNotStored marks a response that is not stored yet or at all.
	HeaderNotStored = "Idempotent-Not-Stored"
	// NotStoredTooLarge: the body was too large; a retry gets 409.
	NotStoredTooLarge = "response-too-large"
	// NotStoredStatus: the status is not stored; a retry runs again.
	NotStoredStatus = "status-not-stored"
	// NotStoredPending: the record's write is retried while the lease lasts.
	NotStoredPending = "store-pending"
	// NotStoredLeaseLost: the lease was lost; a retry runs again.
	NotStoredLeaseLost = "lease-lost"
)

// DefaultReplayStatus reports whether a status is stored by default.
// docs/http.md lists them.
func DefaultReplayStatus(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusRequestTimeout, http.StatusConflict,
		http.StatusLocked, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return 200 <= status && status <= 499
}

var defaultReplayHeaders = []string{
	"Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language",
	"Content-Location", "Content-Type", "Etag", "Expires", "Last-Modified", "Link",
	"Location", "Retry-After", "Vary",
}

// DefaultReplayHeaders returns the response headers stored and replayed
// by default, never Set-Cookie.
func DefaultReplayHeaders() []string { return slices.Clone(defaultReplayHeaders) }
