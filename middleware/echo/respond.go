package echolock

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/middleware/guard"
)

// DefaultBusyHandler sets Retry-After and returns an *echo.HTTPError.
func DefaultBusyHandler(c echo.Context, retryAfter time.Duration, err error) error {
	c.Response().Header().Set(echo.HeaderRetryAfter, guard.RetryAfterValue(retryAfter))
	return httpError(guard.BusyProblem(retryAfter, err), err)
}

// DefaultErrorHandler returns an *echo.HTTPError wrapping err; a 503
// (a failing or silent backend) sets Retry-After too.
func DefaultErrorHandler(c echo.Context, err error) error {
	p := guard.ErrorProblem(err)
	if p.Status == http.StatusServiceUnavailable {
		c.Response().Header().Set(echo.HeaderRetryAfter, guard.RetryAfterValue(guard.UnavailableRetryAfter))
	}
	return httpError(p, err)
}

// httpError is p as an *echo.HTTPError wrapping err.
func httpError(p guard.Problem, err error) *echo.HTTPError {
	return &echo.HTTPError{Code: p.Status, Message: p.Detail, Internal: err}
}

// ProblemBusyHandler answers guard.DefaultBusyHandler's problem.
func ProblemBusyHandler(c echo.Context, retryAfter time.Duration, err error) error {
	guard.DefaultBusyHandler(c.Response(), c.Request(), retryAfter, err)
	return nil
}

// ProblemErrorHandler answers guard.DefaultErrorHandler's problem.
func ProblemErrorHandler(c echo.Context, err error) error {
	guard.DefaultErrorHandler(c.Response(), c.Request(), err)
	return nil
}
