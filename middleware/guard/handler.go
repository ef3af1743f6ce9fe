package guard

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// BusyHandler answers a request whose key is held, or whose limit's
// slots are all taken. retryAfter is whole seconds, at least one; err
// matches lock.ErrLocked, and ErrLimitReached for a limit.
type BusyHandler func(w http.ResponseWriter, r *http.Request, retryAfter time.Duration, err error)

// ErrorHandler answers a request refused for another reason: a bad key
// (lock.CodeInvalidArgument), a replay error, a failing backend.
type ErrorHandler func(w http.ResponseWriter, r *http.Request, err error)

// DefaultBusyHandler answers BusyProblem with a Retry-After header.
func DefaultBusyHandler(w http.ResponseWriter, r *http.Request, retryAfter time.Duration, err error) {
	w.Header().Set("Retry-After", RetryAfterValue(retryAfter))
	WriteProblem(w, withBase(r.Context(), BusyProblem(retryAfter, err)))
}

// DefaultErrorHandler answers ErrorProblem, with a Retry-After of
// UnavailableRetryAfter when it is 503 (a failing or silent backend).
func DefaultErrorHandler(w http.ResponseWriter, r *http.Request, err error) {
	p := ErrorProblem(err)
	if p.Status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", RetryAfterValue(UnavailableRetryAfter))
	}
	WriteProblem(w, withBase(r.Context(), p))
}

// ProblemFor returns p as the middleware in front of r answers it: its
// type under the problem type base, when one is set.
func ProblemFor(r *http.Request, p Problem) Problem { return withBase(r.Context(), p) }

// withBase puts p's type under the problem type base the adapter set on
// ctx, if any.
func withBase(ctx context.Context, p Problem) Problem {
	if base := settings.ProblemBase(ctx); base != "" {
		if name, ok := strings.CutPrefix(p.Type, TypeURNPrefix); ok {
			p.Type = base + name
		}
	}
	return p
}
