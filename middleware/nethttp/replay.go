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
	// HeaderNotStored ("Idempotent-Not-Stored: response-too-large") marks
	// a first response that was not stored because its body passed the
	// limit: a retry runs the handler again.
	HeaderNotStored = guard.HeaderNotStored
)

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
// (status, the allow-listed headers, the body) is stored for ttl (at
// least 1ms; DefaultReplayTTL is 24h; 0 is an error) by the same atomic
// step that releases the lock. A later request with the key gets that
// response byte for byte, with HeaderReplayed, without running the
// handler; a request that waited for the key (WithWait) while the first
// ran gets it too. The backend must implement lock.Recorder
// (redisbackend.Backend does; otellock.Wrap forwards it), else New
// returns an error.
//
// A fingerprint of the request is stored with the response: the method,
// the route, the request URI, the SHA-256 of the body (read up to
// WithReplayMaxRequestBody, and handed to the handler intact) and
// WithFingerprint's part. A later request with the key and another
// fingerprint is answered 422 (ErrKeyReused).
//
// Nothing is stored, so the next request runs the handler again, when the
// handler answers 5xx, panics, or loses its lease, and when the response
// body passes WithReplayMaxBody: that response is sent as is, marked
// HeaderNotStored. A stored value that cannot be read is answered 500
// (ErrBadRecord), with one log line per request.
func WithReplay(ttl time.Duration) Option {
	return optionFunc(func(c *config) {
		c.replayOn = true
		c.replay.TTL = ttl
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
// DefaultReplayMaxBody). The response is held back until it ends, the
// handler flushes, or it passes n bytes, so that an answer over the limit
// can be marked HeaderNotStored; a handler that flushes first streams as
// usual and its headers go out unmarked. Needs WithReplay.
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
