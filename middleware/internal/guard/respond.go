package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Problem types (RFC 9457 "type" members) of the default responses. They
// are URNs, stable identifiers, unless a base URI is set
// ([WithProblemBase]): each is then that base followed by the name after
// TypeURNPrefix, such as "https://example.com/problems/lock-busy", a
// document a client can read.
const (
	// TypeURNPrefix starts every default problem type.
	TypeURNPrefix = "urn:syncguard:problem:"
	// TypeBusy is the type of the 409 answer to a key held by another
	// request.
	TypeBusy = "urn:syncguard:problem:lock-busy"
	// TypeLimitReached is the type of the 429 answer to a key whose
	// concurrency limit is reached (ErrLimitReached).
	TypeLimitReached = "urn:syncguard:problem:concurrency-limit-reached"
	// TypeMisconfigured is the type of the 500 answer to a lock the
	// program asks for wrongly: a limit on a backend without limits, or a
	// key used both as a lock and as a limit (lock.ErrKindMismatch).
	TypeMisconfigured = "urn:syncguard:problem:lock-misconfigured"
	// TypeInvalidKey is the type of the 400 answer to a missing or invalid
	// key.
	TypeInvalidKey = "urn:syncguard:problem:invalid-lock-key"
	// TypeUnavailable is the type of the 503 answer to a failing backend.
	TypeUnavailable = "urn:syncguard:problem:lock-unavailable"
	// TypeKeyReused is the type of the 422 answer to a key whose stored
	// response belongs to a different request (ErrKeyReused).
	TypeKeyReused = "urn:syncguard:problem:idempotency-key-reused"
	// TypeRequestTooLarge is the type of the 413 answer to a request body
	// over the replay limit (ErrRequestTooLarge).
	TypeRequestTooLarge = "urn:syncguard:problem:request-too-large"
	// TypeBadRequestBody is the type of the 400 answer to a request body
	// that could not be read or fingerprinted (ErrRequestBody,
	// ErrFingerprint).
	TypeBadRequestBody = "urn:syncguard:problem:bad-request-body"
	// TypeBadRecord is the type of the 500 answer to a stored response
	// that cannot be read (ErrBadRecord).
	TypeBadRecord = "urn:syncguard:problem:replay-record-unreadable"
	// TypeNotReplayable is the type of the 409 answer to a key whose
	// request completed without a stored response (ErrNotReplayable).
	TypeNotReplayable = "urn:syncguard:problem:response-not-stored"
	// TypeNoScope is the type of the 401 answer to a request without a
	// scope (ErrScope).
	TypeNoScope = "urn:syncguard:problem:no-scope"
)

type problemBaseKey struct{}

// WithProblemBase returns ctx carrying base, the URI that the problem
// types of the default answers start with instead of TypeURNPrefix.
func WithProblemBase(ctx context.Context, base string) context.Context {
	return context.WithValue(ctx, problemBaseKey{}, base)
}

// ValidProblemBase checks a problem type base URI: an absolute http or
// https URI.
func ValidProblemBase(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return lockdriver.InvalidArgument("config", fmt.Sprintf("problem type base %q is not an absolute http(s) URI", base))
	}
	return nil
}

// withBase returns p with its type under ctx's problem base, if any.
func withBase(ctx context.Context, p Problem) Problem {
	if base, ok := ctx.Value(problemBaseKey{}).(string); ok && base != "" {
		if name, ok := strings.CutPrefix(p.Type, TypeURNPrefix); ok {
			p.Type = base + name
		}
	}
	return p
}

// ProblemContentType is the media type of RFC 9457 problem details.
const ProblemContentType = "application/problem+json"

// Problem is an RFC 9457 problem details object.
type Problem struct {
	// Type identifies the kind of problem (TypeBusy, ...).
	Type string `json:"type"`
	// Title is a short human-readable summary of the type.
	Title string `json:"title"`
	// Status is the HTTP status code of the answer.
	Status int `json:"status"`
	// Detail explains this occurrence; it never contains the key.
	Detail string `json:"detail,omitempty"`
	// OriginalStatus is, for ErrNotReplayable, the status the completed
	// request answered.
	OriginalStatus int `json:"original_status,omitempty"`
}

// UnmeasuredRetryAfter caps Retry-After on a route where no handler has
// run yet on this instance (no hold time measured): the holder's lease
// alone would say up to the whole TTL, as the heartbeat keeps extending
// it, while most holders finish in a fraction of it.
const UnmeasuredRetryAfter = time.Second

// RetryAfter returns how long a client should wait before retrying after
// err (an error matching lock.ErrLocked) on route, in whole seconds,
// rounded up, at least one:
//
//   - when the holder's lease is not being extended (its time left, by
//     err's *lock.LockedError, is under half the TTL: a live holder's
//     heartbeat extends it every third of the TTL), the holder is dead and
//     the key frees at its expiry: that time left;
//   - otherwise the time left capped by the moving average of how long
//     this route's handlers held the lock, or, before one has run here, by
//     UnmeasuredRetryAfter.
//
// For a limit, the time left is the earliest expiry among the slots'
// holders; the TTL stands in when it is unknown.
func (g *Guard) RetryAfter(route string, err error) time.Duration {
	est, ok := g.holds.estimate(route)
	if !ok {
		est = -1
	}
	return retryAfter(err, g.ttl, est, time.Now())
}

// retryAfter is RetryAfter at now, with the hold-time estimate est (< 0:
// none).
func retryAfter(err error, ttl, est time.Duration, now time.Time) time.Duration {
	d := ttl
	var le *lock.LockedError
	known := errors.As(err, &le) && !le.ExpiresAt.IsZero()
	if known {
		d = le.ExpiresAt.Sub(now)
	}
	switch {
	case known && d < ttl/2:
		// Not extended: a dead holder, whose lease ends at its expiry.
	case est >= 0:
		d = min(d, est)
	default:
		d = min(d, UnmeasuredRetryAfter)
	}
	secs := (d + time.Second - 1) / time.Second
	return max(secs, 1) * time.Second
}

// RetryAfterValue returns the Retry-After header value for retryAfter:
// whole seconds, rounded up, at least one.
func RetryAfterValue(retryAfter time.Duration) string {
	return strconv.FormatInt(retrySeconds(retryAfter), 10)
}

func retrySeconds(d time.Duration) int64 {
	return max(int64((d+time.Second-1)/time.Second), 1)
}

// BusyProblem describes the default answer for a busy key, err (matching
// lock.ErrLocked): 409 Conflict, or 429 Too Many Requests when err matches
// ErrLimitReached, retry after retryAfter (whole seconds, rounded up).
func BusyProblem(retryAfter time.Duration, err error) Problem {
	if errors.Is(err, ErrLimitReached) {
		return Problem{
			Type:   TypeLimitReached,
			Title:  "Too many concurrent requests",
			Status: http.StatusTooManyRequests,
			Detail: "The limit of concurrent requests for this resource is reached. Retry after " +
				RetryAfterValue(retryAfter) + "s.",
		}
	}
	return Problem{
		Type:   TypeBusy,
		Title:  "Resource busy",
		Status: http.StatusConflict,
		Detail: "Another request holds the lock for this resource. Retry after " +
			RetryAfterValue(retryAfter) + "s.",
	}
}

// ErrorProblem describes the default answer for err, a failure other than
// a busy key: 413 Content Too Large for a body over a limit
// (ErrRequestTooLarge, or an http.MaxBytesError from anywhere), 401
// Unauthorized for no scope (ErrScope), 500 Internal Server Error for a
// lock the program asks for wrongly (errors.ErrUnsupported: a limit on a
// backend without limits; lock.ErrKindMismatch: a key used both as a lock
// and as a limit), 400 Bad Request for a missing or invalid key (other
// lock.CodeInvalidArgument errors), the replay errors' own statuses (422
// ErrKeyReused, 409 ErrNotReplayable, 400 ErrRequestBody and
// ErrFingerprint, 500 ErrBadRecord), 503 Service Unavailable otherwise. It
// never contains the key.
func ErrorProblem(err error) Problem {
	var mbe *http.MaxBytesError
	var nre *NotReplayableError
	switch {
	case errors.As(err, &mbe), errors.Is(err, ErrRequestTooLarge):
		return Problem{Type: TypeRequestTooLarge, Title: "Request body too large", Status: http.StatusRequestEntityTooLarge,
			Detail: "The request body is over the limit."}
	case errors.Is(err, ErrScope):
		return Problem{Type: TypeNoScope, Title: "Unauthenticated", Status: http.StatusUnauthorized,
			Detail: "The request reached the lock without the authenticated principal its key belongs to."}
	case errors.As(err, &nre):
		return Problem{Type: TypeNotReplayable, Title: "Response not stored", Status: http.StatusConflict, OriginalStatus: nre.Status,
			Detail: "A request with this key completed (status " + strconv.Itoa(nre.Status) + "), but its response was too large to store, so it can be neither replayed nor run again. Use a new key for a new request."}
	case errors.Is(err, ErrNotReplayable):
		return Problem{Type: TypeNotReplayable, Title: "Response not stored", Status: http.StatusConflict,
			Detail: "A request with this key completed, but its response was too large to store, so it can be neither replayed nor run again. Use a new key for a new request."}
	case errors.Is(err, ErrKeyReused):
		return Problem{Type: TypeKeyReused, Title: "Idempotency key reused", Status: http.StatusUnprocessableEntity,
			Detail: "A response is stored for this key, for a different request (method, route, URI or body). Use a new key for a new request."}
	case errors.Is(err, ErrRequestBody), errors.Is(err, ErrFingerprint):
		return Problem{Type: TypeBadRequestBody, Title: "Bad request", Status: http.StatusBadRequest,
			Detail: "The request could not be read to fingerprint it."}
	case errors.Is(err, ErrBadRecord):
		return Problem{Type: TypeBadRecord, Title: "Stored response unreadable", Status: http.StatusInternalServerError,
			Detail: "The response stored for this key cannot be read; it was not replayed and the request was not run."}
	case errors.Is(err, errors.ErrUnsupported), errors.Is(err, lock.ErrKindMismatch):
		return Problem{Type: TypeMisconfigured, Title: "Lock misconfigured", Status: http.StatusInternalServerError,
			Detail: "The server asks for this resource's lock in a way its lock backend does not support; the request was not run."}
	}
	if lock.CodeOf(err) == lock.CodeInvalidArgument {
		detail := "The request does not carry a valid lock key."
		var le *lock.Error
		// Messages of lock.Error never contain the key itself.
		if errors.As(err, &le) && le.Msg != "" {
			detail = "The request does not carry a valid lock key: " + le.Msg + "."
		}
		return Problem{
			Type:   TypeInvalidKey,
			Title:  "Invalid lock key",
			Status: http.StatusBadRequest,
			Detail: detail,
		}
	}
	return Problem{
		Type:   TypeUnavailable,
		Title:  "Lock service unavailable",
		Status: http.StatusServiceUnavailable,
		Detail: "The lock for this request could not be taken; try again later.",
	}
}

// WriteBusy writes the default answer for a busy key, err: 409 Conflict
// (429 Too Many Requests for ErrLimitReached) with Retry-After (whole
// seconds) and the BusyProblem body, its type under ctx's problem base.
func WriteBusy(ctx context.Context, w http.ResponseWriter, retryAfter time.Duration, err error) {
	w.Header().Set("Retry-After", RetryAfterValue(retryAfter))
	WriteProblem(w, withBase(ctx, BusyProblem(retryAfter, err)))
}

// WriteError writes the default answer for err, a failure other than a
// busy key: the ErrorProblem body with its status, its type under ctx's
// problem base.
func WriteError(ctx context.Context, w http.ResponseWriter, err error) {
	WriteProblem(w, withBase(ctx, ErrorProblem(err)))
}

// WriteProblem writes p as application/problem+json with status p.Status.
func WriteProblem(w http.ResponseWriter, p Problem) {
	body, err := json.Marshal(p)
	if err != nil { // unreachable: Problem has only strings and an int
		http.Error(w, http.StatusText(p.Status), p.Status)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ProblemContentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(p.Status)
	_, _ = w.Write(append(body, '\n'))
}
