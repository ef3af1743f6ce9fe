package echolock

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// Replay defaults and headers.
const (
	// DefaultReplayTTL is the replay TTL when ReplayConfig.TTL is zero:
	// 24 hours, as Stripe keeps idempotency keys.
	DefaultReplayTTL = guard.DefaultReplayTTL
	// DefaultReplayMaxBody is the largest response body stored when
	// ReplayConfig.MaxBody is zero: 1 MiB.
	DefaultReplayMaxBody = guard.DefaultReplayMaxBody
	// DefaultReplayMaxRequestBody is the largest request body accepted
	// when ReplayConfig.MaxRequestBody is zero: 1 MiB.
	DefaultReplayMaxRequestBody = guard.DefaultReplayMaxRequestBody
	// HeaderReplayed ("Idempotent-Replayed: true") marks a replayed
	// response.
	HeaderReplayed = guard.HeaderReplayed
	// HeaderNotStored ("Idempotent-Not-Stored: response-too-large") marks
	// a first response that was not stored because its body passed the
	// limit: a retry runs the handler again.
	HeaderNotStored = guard.HeaderNotStored
)

// Errors of replay mode, passed to Config.ErrorHandler (match them with
// errors.Is); DefaultErrorHandler turns each into an *echo.HTTPError with
// its status.
var (
	// ErrKeyReused: a response is stored for the key, for a different
	// request (another fingerprint). Answered 422 Unprocessable Content.
	ErrKeyReused = guard.ErrKeyReused
	// ErrRequestTooLarge: the request body is over
	// ReplayConfig.MaxRequestBody. Answered 413 Content Too Large.
	ErrRequestTooLarge = guard.ErrRequestTooLarge
	// ErrRequestBody: the request body could not be read. Answered 400.
	ErrRequestBody = guard.ErrRequestBody
	// ErrFingerprint: ReplayConfig.Fingerprint failed. Answered 400.
	ErrFingerprint = guard.ErrFingerprint
	// ErrBadRecord: the value stored for the key cannot be read as a
	// response (corrupt, foreign, or a newer format). Answered 500, and
	// logged, until it expires or is deleted: no replay and no new run.
	ErrBadRecord = guard.ErrBadRecord
)

// DefaultReplayHeaders returns the response headers stored and replayed
// when ReplayConfig.Headers is nil: Cache-Control, Content-Disposition,
// Content-Encoding, Content-Language, Content-Location, Content-Type,
// ETag, Expires, Last-Modified, Link, Location, Retry-After and Vary.
// Set-Cookie and every other header are not replayed.
func DefaultReplayHeaders() []string { return guard.DefaultReplayHeaders() }

// ReplayConfig configures replay mode (Config.Replay), for idempotent
// requests: the first request with a key runs the handler under the lock,
// and its response (status, the allow-listed headers, the body) is stored
// for TTL by the same atomic step that releases the lock. A later request
// with the key gets that response byte for byte, with HeaderReplayed,
// without running the handler; a request that waited for the key
// (Config.Wait) while the first ran gets it too. The Backend must
// implement lock.Recorder (redisbackend.Backend does; otellock.Wrap
// forwards it), else ToMiddleware returns an error.
//
// A fingerprint of the request is stored with the response: the method,
// the route, the request URI, the SHA-256 of the body (read up to
// MaxRequestBody, and handed to the handler intact) and Fingerprint's
// part. A later request with the key and another fingerprint is answered
// 422 (ErrKeyReused).
//
// Nothing is stored, so the next request runs the handler again, when the
// handler's answer is a 5xx (a returned error is rendered by
// c.Error inside the middleware, so its status counts; the error is still
// returned, and Echo's HTTPErrorHandler skips the committed response),
// when it panics or loses its lease, and when the response body passes
// MaxBody: that response is sent as is, marked HeaderNotStored. A stored
// value that cannot be read is answered 500 (ErrBadRecord), with one log
// line per request.
//
// Zero fields take the defaults.
type ReplayConfig struct {
	// TTL is how long a response is replayed (DefaultReplayTTL when zero;
	// at least 1ms).
	TTL time.Duration
	// Headers are the response headers stored and replayed (any case);
	// nil means DefaultReplayHeaders(), an empty non-nil slice none.
	// Headers the replay sets itself or that belong to the connection
	// (Content-Length, Transfer-Encoding, Connection, ...) are an error.
	Headers []string
	// MaxBody is the largest response body stored (DefaultReplayMaxBody
	// when zero). The response is held back until it ends, the handler
	// flushes, or it passes MaxBody, so that an answer over the limit can
	// be marked HeaderNotStored; a handler that flushes first streams as
	// usual and its headers go out unmarked.
	MaxBody int64
	// MaxRequestBody is the largest request body accepted
	// (DefaultReplayMaxRequestBody when zero): the body is read into
	// memory to be fingerprinted, and a larger one is answered 413
	// (ErrRequestTooLarge) without running the handler.
	MaxRequestBody int64
	// Fingerprint, when set, adds its result to the fingerprint, such as
	// the authenticated tenant, so that the same key and body sent by
	// another tenant is a different request. It runs after the body has
	// been read (the request's Body reads it again); an error is answered
	// 400 (ErrFingerprint).
	Fingerprint func(c echo.Context) (string, error)
}

func (r *ReplayConfig) guard() *guard.ReplayConfig {
	if r == nil {
		return nil
	}
	return &guard.ReplayConfig{TTL: r.TTL, Headers: r.Headers, MaxBody: r.MaxBody, MaxRequestBody: r.MaxRequestBody}
}
