package echolock

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// DefaultBusyHandler sets the Retry-After header on the response and
// returns an *echo.HTTPError with 409 Conflict (429 Too Many Requests when
// err matches ErrLimitReached), a message without the key, and err
// (matching lock.ErrLocked) as Internal, so the application's
// HTTPErrorHandler renders the answer, as it does for Echo's own
// middleware. The header is set before returning because an HTTPError
// carries none (Echo's BasicAuth sets WWW-Authenticate the same way); it
// stays on the response whatever the HTTPErrorHandler writes.
func DefaultBusyHandler(c echo.Context, retryAfter time.Duration, err error) error {
	c.Response().Header().Set(echo.HeaderRetryAfter, guard.RetryAfterValue(retryAfter))
	return httpError(guard.BusyProblem(retryAfter, err), err)
}

// DefaultErrorHandler returns an *echo.HTTPError with 400 Bad Request for
// a missing or invalid key (lock.CodeInvalidArgument), 401 Unauthorized
// for a request without a scope (ErrScope), 413 for a body over a limit
// (ErrRequestTooLarge or an http.MaxBytesError), 500 Internal Server
// Error for a limit the backend cannot keep (an error matching
// errors.ErrUnsupported or lock.ErrKindMismatch), the replay errors' own
// statuses (422 ErrKeyReused, 409 ErrNotReplayable, ...), and 503 Service
// Unavailable otherwise, a message without the key, and err as Internal,
// for the application's HTTPErrorHandler to render.
func DefaultErrorHandler(_ echo.Context, err error) error {
	return httpError(guard.ErrorProblem(err), err)
}

// httpError is the *echo.HTTPError for the default answer p to err. Echo
// shows Internal only in debug mode, and its logger middleware logs it.
func httpError(p guard.Problem, err error) *echo.HTTPError {
	return &echo.HTTPError{Code: p.Status, Message: p.Detail, Internal: err}
}

// ProblemBusyHandler is a BusyHandler that answers an RFC 9457 problem
// details body (application/problem+json, type
// urn:syncguard:problem:lock-busy) with 409 Conflict and a Retry-After
// header, or, when err matches ErrLimitReached, 429 Too Many Requests
// (type urn:syncguard:problem:concurrency-limit-reached), the answers
// httplock gives, and returns nil: the application's HTTPErrorHandler
// does not see it.
func ProblemBusyHandler(c echo.Context, retryAfter time.Duration, err error) error {
	guard.WriteBusy(c.Request().Context(), c.Response(), retryAfter, err)
	return nil
}

// ProblemErrorHandler is an ErrorHandler that answers an RFC 9457 problem
// details body (application/problem+json) with the status
// DefaultErrorHandler chooses (400 Bad Request for a missing or invalid
// key, 503 Service Unavailable for a failing backend, ...), the answer
// httplock gives, and returns nil. The
// body never contains the key.
func ProblemErrorHandler(c echo.Context, err error) error {
	guard.WriteError(c.Request().Context(), c.Response(), err)
	return nil
}
