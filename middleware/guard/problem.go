package guard

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Problem types (RFC 9457) of the default answers. With a base URI
// (WithProblemTypeBase) each is the base followed by the name after
// TypeURNPrefix.
const (
	TypeURNPrefix       = "urn:syncguard:problem:"
	TypeBusy            = TypeURNPrefix + "lock-busy"                 // 409
	TypeLimitReached    = TypeURNPrefix + "concurrency-limit-reached" // 429
	TypeMisconfigured   = TypeURNPrefix + "lock-misconfigured"        // 500
	TypeInvalidKey      = TypeURNPrefix + "invalid-lock-key"          // 400
	TypeUnavailable     = TypeURNPrefix + "lock-unavailable"          // 503
	TypeKeyReused       = TypeURNPrefix + "idempotency-key-reused"    // 422
	TypeRequestTooLarge = TypeURNPrefix + "request-too-large"         // 413
	TypeBadRequestBody  = TypeURNPrefix + "bad-request-body"          // 400
	TypeBadRecord       = TypeURNPrefix + "replay-record-unreadable"  // 500
	TypeNotReplayable   = TypeURNPrefix + "response-not-stored"       // 409
	TypeNoScope         = TypeURNPrefix + "no-scope"                  // 401
)

// ProblemContentType is the media type of RFC 9457 problem details.
const ProblemContentType = "application/problem+json"

// Problem is an RFC 9457 problem details object. Detail never contains
// the key.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// OriginalStatus is, for ErrNotReplayable, what the first run answered.
	OriginalStatus int `json:"original_status,omitempty"`
}

// RetryAfterValue is the Retry-After header value of d: whole seconds,
// rounded up, at least one.
func RetryAfterValue(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}

// BusyProblem is the answer to a busy key: 409, or 429 when err matches
// ErrLimitReached.
func BusyProblem(retryAfter time.Duration, err error) Problem {
	retry := " Retry after " + RetryAfterValue(retryAfter) + "s."
	if errors.Is(err, ErrLimitReached) {
		return Problem{Type: TypeLimitReached, Title: "Too many concurrent requests", Status: http.StatusTooManyRequests,
			Detail: "The limit of concurrent requests for this resource is reached." + retry}
	}
	return Problem{Type: TypeBusy, Title: "Resource busy", Status: http.StatusConflict,
		Detail: "Another request holds the lock for this resource." + retry}
}

const notStoredDetail = " but its response was too large to store, so it can be neither replayed nor run again. Use a new key for a new request."

// ErrorProblem is the answer to err, a refusal other than a busy key
// (docs/http.md lists them); 503 for a failing backend, 500 for one that
// refuses the server's credentials or permissions (lock.CodeAuthFailed).
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
			Detail: "A request with this key completed (status " + strconv.Itoa(nre.Status) + ")," + notStoredDetail}
	case errors.Is(err, ErrNotReplayable):
		return Problem{Type: TypeNotReplayable, Title: "Response not stored", Status: http.StatusConflict,
			Detail: "A request with this key completed," + notStoredDetail}
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
	case lock.CodeOf(err) == lock.CodeAuthFailed:
		return Problem{Type: TypeMisconfigured, Title: "Lock misconfigured", Status: http.StatusInternalServerError,
			Detail: "The server's lock backend refused its credentials or permissions; the request was not run."}
	case lock.CodeOf(err) == lock.CodeInvalidArgument:
		detail := "The request does not carry a valid lock key."
		var le *lock.Error
		if errors.As(err, &le) && le.Msg != "" { // a lock.Error's message never holds the key
			detail = "The request does not carry a valid lock key: " + le.Msg + "."
		}
		return Problem{Type: TypeInvalidKey, Title: "Invalid lock key", Status: http.StatusBadRequest, Detail: detail}
	}
	return Problem{Type: TypeUnavailable, Title: "Lock service unavailable", Status: http.StatusServiceUnavailable,
		Detail: "The lock for this request could not be taken; try again later."}
}

// WriteProblem writes p as application/problem+json with status p.Status.
func WriteProblem(w http.ResponseWriter, p Problem) {
	body, err := json.Marshal(p)
	if err != nil { // unreachable: Problem has only strings and ints
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
