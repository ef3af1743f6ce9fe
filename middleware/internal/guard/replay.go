package guard

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Replay defaults and the response headers of replay mode.
const (
	// DefaultReplayTTL is how long a stored response is replayed when the
	// replay TTL is left at zero.
	DefaultReplayTTL = 24 * time.Hour
	// DefaultReplayMaxBody is the largest response body stored for replay
	// (1 MiB); a larger response is sent, not stored, and marked with
	// HeaderNotStored.
	DefaultReplayMaxBody = 1 << 20
	// DefaultReplayMaxRequestBody is the largest request body read for the
	// fingerprint (1 MiB); a larger one is answered 413.
	DefaultReplayMaxRequestBody = 1 << 20
	// MinReplayTTL is the shortest replay TTL accepted.
	MinReplayTTL = time.Millisecond
	// HeaderReplayed marks a replayed response, with the value "true".
	HeaderReplayed = "Idempotent-Replayed"
	// HeaderNotStored marks a response that is not (or not yet) stored
	// for replay; its value says why and what a retry gets.
	HeaderNotStored = "Idempotent-Not-Stored"
	// NotStoredTooLarge is the HeaderNotStored value of a response with a
	// storable status whose body passed the size limit: the request is
	// recorded as completed, and a retry is answered ErrNotReplayable
	// (409), not run again.
	NotStoredTooLarge = "response-too-large"
	// NotStoredStatus is the HeaderNotStored value of a response whose
	// status is not stored (ReplayConfig.Statuses): a retry runs the
	// handler again.
	NotStoredStatus = "status-not-stored"
	// NotStoredPending is the HeaderNotStored value of a response whose
	// record could not be stored on the first attempt (the backend
	// failed): the write is retried in the background for the lease's
	// remaining time, and until it lands a retry is answered 503 while the
	// backend is unreachable, 409 once it answers (the key stays locked),
	// or, after the lease's TTL with the backend still failing, runs the
	// handler again.
	NotStoredPending = "store-pending"
	// NotStoredLeaseLost is the HeaderNotStored value of a response whose
	// lease was lost while the handler ran: nothing is stored and a retry
	// runs the handler again.
	NotStoredLeaseLost = "lease-lost"
)

// DefaultReplayStatus reports whether a response with status is stored
// and replayed by default: a final answer of the request (2xx, 3xx and
// 4xx), except the 4xx that say "not now" or "not you" rather than "no":
// 401 Unauthorized, 408 Request Timeout, 409 Conflict, 423 Locked, 425
// Too Early and 429 Too Many Requests. A 5xx is not stored by default:
// the client may retry it and the handler runs again.
func DefaultReplayStatus(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusRequestTimeout, http.StatusConflict,
		http.StatusLocked, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return 200 <= status && status <= 499
}

// defaultReplayHeaders are the response headers replayed when none are
// configured: the representation's metadata and where it lives, never
// Set-Cookie or anything else about the client or the connection.
var defaultReplayHeaders = []string{
	"Cache-Control", "Content-Disposition", "Content-Encoding", "Content-Language",
	"Content-Location", "Content-Type", "Etag", "Expires", "Last-Modified", "Link",
	"Location", "Retry-After", "Vary",
}

// DefaultReplayHeaders returns (a copy of) the response headers replayed
// by default: Cache-Control, Content-Disposition, Content-Encoding,
// Content-Language, Content-Location, Content-Type, ETag (canonically
// "Etag"), Expires, Last-Modified, Link, Location, Retry-After and Vary.
func DefaultReplayHeaders() []string { return slices.Clone(defaultReplayHeaders) }

// neverReplayed are headers the replay computes itself or that describe
// the connection: they cannot be allow-listed.
var neverReplayed = []string{
	"Connection", "Content-Length", "Keep-Alive", "Proxy-Connection", "Te",
	"Trailer", "Transfer-Encoding", "Upgrade", HeaderReplayed, HeaderNotStored,
}

// ReplayConfig configures replay mode. Zero fields take the defaults.
type ReplayConfig struct {
	// TTL is how long a stored response is replayed (DefaultReplayTTL
	// when zero; at least MinReplayTTL).
	TTL time.Duration
	// Headers are the response headers stored and replayed (any case);
	// nil means DefaultReplayHeaders, an empty non-nil slice none.
	Headers []string
	// MaxBody is the largest response body stored (DefaultReplayMaxBody
	// when zero).
	MaxBody int64
	// MaxRequestBody is the largest request body read for the fingerprint
	// (DefaultReplayMaxRequestBody when zero).
	MaxRequestBody int64
	// Statuses decides which response statuses are stored (nil means
	// DefaultReplayStatus). Statuses under 200 are never stored.
	Statuses func(status int) bool
}

// replay is a validated ReplayConfig and the backend's Recorder.
type replay struct {
	rec        lock.Recorder
	ttl        time.Duration
	maxBody    int64
	maxReqBody int64
	headers    map[string]bool // canonical names
	statuses   func(int) bool
}

func newReplay(b lock.Backend, c ReplayConfig) (*replay, error) {
	rec, ok := b.(lock.Recorder)
	if !ok && b != nil {
		return nil, lockdriver.InvalidArgument("config", fmt.Sprintf(
			"replay needs a backend that stores responses (lock.Recorder, such as redisbackend.Backend or otellock.Wrap of one); %T is not one", b))
	}
	switch {
	case c.TTL < 0:
		return nil, lockdriver.InvalidArgument("config", "replay TTL must not be negative")
	case c.TTL > 0 && c.TTL < MinReplayTTL:
		return nil, lockdriver.InvalidArgument("config", "replay TTL must be at least "+MinReplayTTL.String())
	case c.MaxBody < 0:
		return nil, lockdriver.InvalidArgument("config", "replay body limit must not be negative")
	case c.MaxRequestBody < 0:
		return nil, lockdriver.InvalidArgument("config", "replay request body limit must not be negative")
	}
	rp := &replay{rec: rec, ttl: c.TTL, maxBody: c.MaxBody, maxReqBody: c.MaxRequestBody, headers: map[string]bool{}}
	if rp.ttl == 0 {
		rp.ttl = DefaultReplayTTL
	}
	if rp.maxBody == 0 {
		rp.maxBody = DefaultReplayMaxBody
	}
	if rp.maxReqBody == 0 {
		rp.maxReqBody = DefaultReplayMaxRequestBody
	}
	rp.statuses = c.Statuses
	if rp.statuses == nil {
		rp.statuses = DefaultReplayStatus
	}
	names := c.Headers
	if names == nil {
		names = defaultReplayHeaders
	}
	for _, n := range names {
		if !ValidHeaderName(n) {
			return nil, lockdriver.InvalidArgument("config", fmt.Sprintf("replay header %q is not a valid header name", n))
		}
		cn := http.CanonicalHeaderKey(n)
		if slices.Contains(neverReplayed, cn) {
			return nil, lockdriver.InvalidArgument("config", fmt.Sprintf("replay header %q cannot be replayed (the replay sets it, or it belongs to the connection)", n))
		}
		rp.headers[cn] = true
	}
	return rp, nil
}

// storable reports whether a response with status is stored.
func (rp *replay) storable(status int) bool {
	return status >= 200 && status <= 599 && rp.statuses(status)
}

// writeReplay writes the stored response r to w, byte for byte, with
// HeaderReplayed: the status, the stored headers and trailers that are
// still allowed, the body. Headers already on w that the response does
// not store (set by middleware in front, such as a request id) stay.
// Trailers are declared (the Trailer header) before WriteHeader, so that
// net/http sends the body chunked and the trailers after it.
func (rp *replay) writeReplay(w http.ResponseWriter, r *wire.Record) {
	h := w.Header()
	for name, vs := range r.Header {
		if rp.headers[name] {
			h[name] = slices.Clone(vs)
		}
	}
	h.Set(HeaderReplayed, "true")
	var trailers []string
	for name := range r.Trailer {
		if rp.headers[name] {
			trailers = append(trailers, name)
		}
	}
	slices.Sort(trailers)
	if len(trailers) > 0 {
		h.Set("Trailer", strings.Join(trailers, ", "))
	} else {
		h.Set("Content-Length", strconv.Itoa(len(r.Body)))
	}
	w.WriteHeader(r.Status)
	_, _ = w.Write(r.Body)
	for _, name := range trailers {
		h[name] = slices.Clone(r.Trailer[name])
	}
}

// ValidHeaderName reports whether s is an RFC 9110 token, the syntax of a
// header field name.
func ValidHeaderName(s string) bool { return wire.ValidHeaderName(s) }
