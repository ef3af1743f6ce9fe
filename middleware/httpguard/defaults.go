package httpguard

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
	// WaitMaxDelay is the longest pause between attempts while waiting
	// for a busy key on a backend without a waiter queue.
	WaitMaxDelay = 50 * time.Millisecond
	// DefaultReplayTTL is a common replay TTL: 24 hours, as Stripe keeps
	// idempotency keys.
	DefaultReplayTTL = 24 * time.Hour
	// MinReplayTTL is the shortest replay TTL accepted.
	MinReplayTTL = time.Millisecond
	// DefaultReplayMaxBody is the largest response body stored: 1 MiB.
	DefaultReplayMaxBody = 1 << 20
	// DefaultReplayMaxRequestBody is the largest request body read for
	// the fingerprint: 1 MiB.
	DefaultReplayMaxRequestBody = 1 << 20
)

// Headers of replay mode, and the values of HeaderNotStored.
const (
	// HeaderReplayed ("Idempotent-Replayed: true") marks a replayed
	// response.
	HeaderReplayed = "Idempotent-Replayed"
	// HeaderNotStored marks a response that is not, or not yet, stored;
	// its value is one of the NotStored constants.
	HeaderNotStored = "Idempotent-Not-Stored"
	// NotStoredTooLarge: the body passed the replay limit; the request is
	// recorded as completed and a retry gets 409 (ErrNotReplayable).
	NotStoredTooLarge = "response-too-large"
	// NotStoredStatus: the status is not stored; a retry runs again.
	NotStoredStatus = "status-not-stored"
	// NotStoredPending: the record's first write failed and is retried in
	// the background while the lease lasts.
	NotStoredPending = "store-pending"
	// NotStoredLeaseLost: the lease was lost while the handler ran; a
	// retry runs again.
	NotStoredLeaseLost = "lease-lost"
)

// DefaultReplayStatus reports whether a status is stored by default:
// 2xx, 3xx and 4xx except 401, 408, 409, 423, 425 and 429, which a retry
// may change. 5xx are not stored.
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
// by default: the representation's metadata and where it lives, never
// Set-Cookie.
func DefaultReplayHeaders() []string { return slices.Clone(defaultReplayHeaders) }
