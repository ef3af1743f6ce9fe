package guard

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Problem types (RFC 9457 "type" members) of the default responses. They
// are URNs: stable identifiers, not documents to fetch.
const (
	TypeBusy        = "urn:syncguard:problem:lock-busy"
	TypeInvalidKey  = "urn:syncguard:problem:invalid-lock-key"
	TypeUnavailable = "urn:syncguard:problem:lock-unavailable"
)

// ProblemContentType is the media type of RFC 9457 problem details.
const ProblemContentType = "application/problem+json"

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// RetryAfter returns how long a client should wait before retrying after
// err (an error matching lock.ErrLocked): the whole seconds, rounded up,
// until the holder's lease expires by err's *lock.LockedError; the TTL when
// that is unknown; at least one second.
func (g *Guard) RetryAfter(err error) time.Duration {
	return retryAfter(err, g.ttl, time.Now())
}

func retryAfter(err error, ttl time.Duration, now time.Time) time.Duration {
	d := ttl
	var le *lock.LockedError
	if errors.As(err, &le) && !le.ExpiresAt.IsZero() {
		d = le.ExpiresAt.Sub(now)
	}
	secs := (d + time.Second - 1) / time.Second
	return max(secs, 1) * time.Second
}

// WriteBusy writes the default answer for a busy key: 409 Conflict with
// Retry-After (whole seconds) and a problem body.
func WriteBusy(w http.ResponseWriter, retryAfter time.Duration) {
	secs := max(int64((retryAfter+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	WriteProblem(w, Problem{
		Type:   TypeBusy,
		Title:  "Resource busy",
		Status: http.StatusConflict,
		Detail: "Another request holds the lock for this resource. Retry after " +
			strconv.FormatInt(secs, 10) + "s.",
	})
}

// WriteError writes the default answer for err, a failure other than a
// busy key: 400 Bad Request for a missing or invalid key
// (lock.CodeInvalidArgument), 503 Service Unavailable otherwise. The body
// never contains the key.
func WriteError(w http.ResponseWriter, err error) {
	if lock.CodeOf(err) == lock.CodeInvalidArgument {
		detail := "The request does not carry a valid lock key."
		var le *lock.Error
		// Messages of lock.Error never contain the key itself.
		if errors.As(err, &le) && le.Msg != "" {
			detail = "The request does not carry a valid lock key: " + le.Msg + "."
		}
		WriteProblem(w, Problem{
			Type:   TypeInvalidKey,
			Title:  "Invalid lock key",
			Status: http.StatusBadRequest,
			Detail: detail,
		})
		return
	}
	WriteProblem(w, Problem{
		Type:   TypeUnavailable,
		Title:  "Lock service unavailable",
		Status: http.StatusServiceUnavailable,
		Detail: "The lock for this request could not be taken; try again later.",
	})
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
