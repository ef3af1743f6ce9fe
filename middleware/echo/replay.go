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
	// HeaderNotStored ("Idempotent-Not-Stored") marks a response that is
	// not, or not yet, stored for replay; its value is one of the
	// NotStored constants.
	HeaderNotStored = guard.HeaderNotStored
	// NotStoredTooLarge: a storable status whose body passed ReplayConfig.MaxBody. The request
	// is recorded as completed, without its response, and a retry is
	// answered 409 (ErrNotReplayable), never run again.
	NotStoredTooLarge = guard.NotStoredTooLarge
	// NotStoredStatus: ReplayConfig.Statuses does not store the status; a
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
	// ErrNotReplayable: a request with the key completed, but its response
	// was too large to store (NotStoredTooLarge). Answered 409 Conflict,
	// without Retry-After, until the record expires: neither replayed nor
	// run again.
	ErrNotReplayable = guard.ErrNotReplayable
	// ErrScope: Config.Scope failed or returned "". Answered 401
	// Unauthorized.
	ErrScope = guard.ErrScope
)

// DefaultReplayHeaders returns the response headers stored and replayed
// when ReplayConfig.Headers is nil: Cache-Control, Content-Disposition,
// Content-Encoding, Content-Language, Content-Location, Content-Type,
// ETag, Expires, Last-Modified, Link, Location, Retry-After and Vary.
// Set-Cookie and every other header are not replayed.
func DefaultReplayHeaders() []string { return guard.DefaultReplayHeaders() }

// ReplayConfig configures replay mode (Config.Replay), for idempotent
// requests: the first request with a key runs the handler under the lock,
// and its response (status, the allow-listed headers, the body, the
// trailers) is stored for TTL by the same atomic step that releases the
// lock. A later request with the key gets that response byte for byte,
// with HeaderReplayed, without running the handler; a request that waited
// for the key (Config.Wait) while the first ran gets it too. The Backend
// must implement lock.Recorder (redisbackend.Backend does, and
// otellock.Wrap of one keeps it), else ToMiddleware returns an error.
//
// Keys belong to a principal: ToMiddleware rejects Replay without
// Config.Scope (or Config.Unscoped, for a public endpoint), and with
// Config.FailOpen. Read keys with the "idempotency:Idempotency-Key"
// KeyLookup, the draft standard's header syntax.
//
// A fingerprint of the request is stored with the response: the method,
// the route, the request URI, the SHA-256 of the body (read up to
// MaxRequestBody, and handed to the handler intact) and Fingerprint's
// part. A later request with the key and another fingerprint is answered
// 422 (ErrKeyReused).
//
// The response is held back until the record is stored, and goes out
// marked HeaderNotStored when it is not: its status is not stored
// (Statuses; a retry runs the handler again), its lease was lost, or the
// record's first write failed (it is retried in the background while the
// lease lasts). A handler's returned error is rendered inside the
// middleware (c.Error), so its status counts, and is not returned as
// well. A body over MaxBody is sent as it is written, marked, and the
// request is recorded as completed: a retry gets 409 (ErrNotReplayable),
// never a second run. A handler that panics before its status went out
// sends nothing it wrote and stores nothing (the panic goes on, for Echo's
// Recover to answer 500); after it, the connection is aborted
// (http.ErrAbortHandler);
// one that hijacks the connection stores nothing. A stored value that
// cannot be read is answered 500 (ErrBadRecord), with one log line per
// request.
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
	// when zero). The response is held back until it is stored, the
	// handler flushes, or it passes MaxBody; an answer over the limit is
	// marked NotStoredTooLarge and recorded as completed without its body,
	// so a retry gets 409 (ErrNotReplayable). A handler that flushes first
	// streams as usual and its headers go out unmarked.
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
	// Statuses decides which response statuses are stored and replayed
	// (nil means DefaultReplayStatus). A stored 5xx is replayed for the
	// whole TTL, so the handler never runs again for that key: store 5xx
	// only when a failing handler has done nothing (its work is one
	// transaction) or the client must not retry with the same key.
	Statuses func(status int) bool
}

func (r *ReplayConfig) guard() *guard.ReplayConfig {
	if r == nil {
		return nil
	}
	return &guard.ReplayConfig{TTL: r.TTL, Headers: r.Headers, MaxBody: r.MaxBody, MaxRequestBody: r.MaxRequestBody, Statuses: r.Statuses}
}
