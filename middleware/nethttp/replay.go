package httplock

import (
	"net/http"
	"time"

	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// Replay defaults and headers.
const (
	// DefaultReplayTTL is a common replay TTL: 24 hours, as Stripe keeps
	// idempotency keys (and echolock's default).
	DefaultReplayTTL = guard.DefaultReplayTTL
	// DefaultReplayMaxBody is the largest response body stored for replay
	// unless WithReplayMaxBody says otherwise: 1 MiB.
	DefaultReplayMaxBody = guard.DefaultReplayMaxBody
	// DefaultReplayMaxRequestBody is the largest request body accepted in
	// replay mode unless WithReplayMaxRequestBody says otherwise: 1 MiB.
	DefaultReplayMaxRequestBody = guard.DefaultReplayMaxRequestBody
	// HeaderReplayed ("Idempotent-Replayed: true") marks a replayed
	// response.
	HeaderReplayed = guard.HeaderReplayed
	// HeaderNotStored ("Idempotent-Not-Stored") marks a response that is
	// not, or not yet, stored for replay; its value is one of the
	// NotStored constants.
	HeaderNotStored = guard.HeaderNotStored
	// NotStoredTooLarge: a storable status whose body passed WithReplayMaxBody. The request is
	// recorded as completed, without its response, and a retry is answered
	// 409 (ErrNotReplayable), never run again.
	NotStoredTooLarge = guard.NotStoredTooLarge
	// NotStoredStatus: WithReplayStatuses does not store the status; a
	// retry runs the handler again.
	NotStoredStatus = guard.NotStoredStatus
	// NotStoredPending: the record's first write failed (the backend did
	// not answer); it is retried in the background for the lease's
	// remaining time; meanwhile a retry is answered 503 while the backend
	// is unreachable and 409 (busy) once it answers.
	NotStoredPending = guard.NotStoredPending
	// NotStoredLeaseLost: the lease was lost while the handler ran; nothing
	// is stored and a retry runs the handler again.
	NotStoredLeaseLost = guard.NotStoredLeaseLost
)

// DefaultReplayStatus reports whether a status is stored by default: 2xx,
// 3xx and 4xx except 401, 408, 409, 423, 425 and 429 (answers that say
// "not now" or "not you", which a retry may change). 5xx are not stored.
func DefaultReplayStatus(status int) bool { return guard.DefaultReplayStatus(status) }

// Errors of replay mode, passed to the ErrorHandler (match them with
// errors.Is); DefaultErrorHandler answers each with a problem+json body.
var (
	// ErrKeyReused: a response is stored for the key, for a different
	// request (another fingerprint). Answered 422 Unprocessable Content.
	ErrKeyReused = guard.ErrKeyReused
	// ErrRequestTooLarge: the request body is over the limit
	// (WithReplayMaxRequestBody). Answered 413 Content Too Large.
	ErrRequestTooLarge = guard.ErrRequestTooLarge
	// ErrRequestBody: the request body could not be read. Answered 400.
	ErrRequestBody = guard.ErrRequestBody
	// ErrFingerprint: the FingerprintFunc failed. Answered 400.
	ErrFingerprint = guard.ErrFingerprint
	// ErrBadRecord: the value stored for the key cannot be read as a
	// response (corrupt, foreign, or a newer format). Answered 500, and
	// logged, until it expires or is deleted: no replay and no new run.
	ErrBadRecord = guard.ErrBadRecord
	// ErrNotReplayable: a request with the key completed, but its response
	// was too large to store (NotStoredTooLarge). Answered 409 Conflict,
	// without Retry-After, until the record expires: neither replayed nor
	// run again.
	ErrNotReplayable = guard.ErrNotReplayable
	// ErrScope: WithScope's function failed or returned "". Answered 401
	// Unauthorized.
	ErrScope = guard.ErrScope
)

// FingerprintFunc returns the application's part of a request's
// fingerprint, such as the authenticated tenant, so that the same key and
// body sent by another tenant is a different request (answered 422).
type FingerprintFunc func(*http.Request) (string, error)

// DefaultReplayHeaders returns the response headers WithReplay stores and
// replays by default: Cache-Control, Content-Disposition,
// Content-Encoding, Content-Language, Content-Location, Content-Type,
// ETag, Expires, Last-Modified, Link, Location, Retry-After and Vary.
// Set-Cookie and every other header are not replayed.
func DefaultReplayHeaders() []string { return guard.DefaultReplayHeaders() }

// WithReplay turns on replay mode, for idempotent requests: the first
// request with a key runs the handler under the lock, and its response
// (status, the allow-listed headers, the body, the trailers) is stored for
// ttl (at least 1ms; DefaultReplayTTL is 24h; 0 is an error) by the same
// atomic step that releases the lock. A later request with the key gets
// that response byte for byte, with HeaderReplayed, without running the
// handler; a request that waited for the key (WithWait) while the first
// ran gets it too. The backend must implement lock.Recorder
// (redisbackend.Backend does, and otellock.Wrap of one keeps it), else
// New returns an error.
//
// Keys belong to a principal: New rejects WithReplay without WithScope
// (or Unscoped, for a public endpoint), and with WithFailOpen. Read keys
// with FromIdempotencyKey, the draft standard's header syntax.
//
// A fingerprint of the request is stored with the response: the method,
// the route, the request URI, the SHA-256 of the body (read up to
// WithReplayMaxRequestBody, and handed to the handler intact) and
// WithFingerprint's part. A later request with the key and another
// fingerprint is answered 422 (ErrKeyReused).
//
// The response is held back until the record is stored, and goes out
// marked HeaderNotStored when it is not: its status is not stored
// (WithReplayStatuses; a retry runs the handler again), its lease was
// lost, or the record's first write failed (it is retried in the
// background while the lease lasts). A body over WithReplayMaxBody is
// sent as it is written, marked, and the request is recorded as
// completed: a retry gets 409 (ErrNotReplayable), never a second run. A
// handler that panics before its status went out sends nothing it wrote
// and stores nothing (the panic goes on, for a recovering middleware to
// answer 500); after it, the connection is aborted (http.ErrAbortHandler); one that
// hijacks the connection stores nothing. A stored value that cannot be
// read is answered 500 (ErrBadRecord), with one log line per request.
func WithReplay(ttl time.Duration) Option {
	return optionFunc(func(c *config) {
		c.replayOn = true
		c.replay.TTL = ttl
	})
}

// WithReplayStatuses sets which response statuses are stored and replayed
// (default DefaultReplayStatus). To store errors too, as Stripe does:
//
//	httplock.WithReplayStatuses(func(s int) bool { return httplock.DefaultReplayStatus(s) || s >= 500 })
//
// A stored 5xx is replayed for the whole replay TTL: the handler never
// runs again for that key, so store 5xx only when a handler that fails
// has done nothing (its work is one transaction) or when the client must
// not retry with the same key. Needs WithReplay.
func WithReplayStatuses(store func(status int) bool) Option {
	return optionFunc(func(c *config) {
		c.replay.Statuses = store
		c.replayTuned = "WithReplayStatuses"
	})
}

// WithReplayHeaders sets the response headers stored and replayed (any
// case; default DefaultReplayHeaders()). Headers the replay sets itself or
// that belong to the connection (Content-Length, Transfer-Encoding,
// Connection, ...) are an error. Needs WithReplay.
func WithReplayHeaders(names ...string) Option {
	return optionFunc(func(c *config) {
		c.replay.Headers = append([]string{}, names...)
		c.replayTuned = "WithReplayHeaders"
	})
}

// WithReplayMaxBody sets the largest response body stored (default
// DefaultReplayMaxBody). The response is held back until it is stored,
// the handler flushes, or it passes n bytes; an answer over the limit is
// marked NotStoredTooLarge and recorded as completed without its body,
// so a retry gets 409 (ErrNotReplayable). A handler that flushes first
// streams as usual and its headers go out unmarked. Needs WithReplay.
func WithReplayMaxBody(n int64) Option {
	return optionFunc(func(c *config) {
		c.replay.MaxBody = n
		c.replayTuned = "WithReplayMaxBody"
	})
}

// WithReplayMaxRequestBody sets the largest request body accepted in
// replay mode (default DefaultReplayMaxRequestBody): the body is read
// into memory to be fingerprinted, and a larger one is answered 413
// (ErrRequestTooLarge) without running the handler. Needs WithReplay.
func WithReplayMaxRequestBody(n int64) Option {
	return optionFunc(func(c *config) {
		c.replay.MaxRequestBody = n
		c.replayTuned = "WithReplayMaxRequestBody"
	})
}

// WithFingerprint adds f's result to the request fingerprint (see
// WithReplay). It runs after the body has been read (r.Body reads it
// again); an error is answered 400 (ErrFingerprint). Needs WithReplay.
func WithFingerprint(f FingerprintFunc) Option {
	return optionFunc(func(c *config) {
		c.fingerprint = f
		c.replayTuned = "WithFingerprint"
	})
}
