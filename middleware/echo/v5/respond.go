package echolock

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/middleware/guard"
)

// DefaultBusyHandler sets Retry-After and returns an *echo.HTTPError.
func DefaultBusyHandler(c *echo.Context, retryAfter time.Duration, err error) error {
	c.Response().Header().Set(echo.HeaderRetryAfter, guard.RetryAfterValue(retryAfter))
	return httpError(c, guard.BusyProblem(retryAfter, err), err)
}

// DefaultErrorHandler returns an *echo.HTTPError wrapping err; a 503
// (a failing or silent backend) sets Retry-After too.
func DefaultErrorHandler(c *echo.Context, err error) error {
	p := guard.ErrorProblem(err)
	if p.Status == http.StatusServiceUnavailable {
		c.Response().Header().Set(echo.HeaderRetryAfter, guard.RetryAfterValue(guard.UnavailableRetryAfter))
	}
	return httpError(c, p, err)
}

// httpError is p as an *echo.HTTPError wrapping a ProblemErrorer.
func httpError(c *echo.Context, p guard.Problem, err error) error {
	p = guard.ProblemFor(c.Request(), p)
	return echo.HTTPError{Code: p.Status, Message: p.Detail}.Wrap(&problem{p: p, err: err})
}

// problem is a refusal's error and its problem.
type problem struct {
	p   guard.Problem
	err error
}

func (e *problem) Error() string { return e.err.Error() }

func (e *problem) Unwrap() error { return e.err }

// ProblemError returns the problem, for Echo's RFC 9457 handler.
func (e *problem) ProblemError() *echo.ProblemError {
	return &echo.ProblemError{Type: e.p.Type, Title: e.p.Title, Status: e.p.Status, Detail: e.p.Detail}
}

// ProblemBusyHandler answers guard.DefaultBusyHandler's problem.
func ProblemBusyHandler(c *echo.Context, retryAfter time.Duration, err error) error {
	guard.DefaultBusyHandler(c.Response(), c.Request(), retryAfter, err)
	return nil
}

// ProblemErrorHandler answers guard.DefaultErrorHandler's problem.
func ProblemErrorHandler(c *echo.Context, err error) error {
	guard.DefaultErrorHandler(c.Response(), c.Request(), err)
	return nil
}
