package echolock

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/middleware/httpguard"
)

// DefaultBusyHandler sets Retry-After and returns an *echo.HTTPError.
func DefaultBusyHandler(c *echo.Context, retryAfter time.Duration, err error) error {
	c.Response().Header().Set(echo.HeaderRetryAfter, httpguard.RetryAfterValue(retryAfter))
	return httpError(c, httpguard.BusyProblem(retryAfter, err), err)
}

// DefaultErrorHandler returns an *echo.HTTPError wrapping err; a 503
// (a failing or silent backend) sets Retry-After too.
func DefaultErrorHandler(c *echo.Context, err error) error {
	p := httpguard.ErrorProblem(err)
	if p.Status == http.StatusServiceUnavailable {
		c.Response().Header().Set(echo.HeaderRetryAfter, httpguard.RetryAfterValue(httpguard.UnavailableRetryAfter))
	}
	return httpError(c, p, err)
}

// httpError is p as an *echo.HTTPError wrapping a ProblemErrorer.
func httpError(c *echo.Context, p httpguard.Problem, err error) error {
	p = httpguard.ProblemFor(c.Request(), p)
	return echo.HTTPError{Code: p.Status, Message: p.Detail}.Wrap(&problem{p: p, err: err})
}

// problem is a refusal's error and its problem.
type problem struct {
	p   httpguard.Problem
	err error
}

func (e *problem) Error() string { return e.err.Error() }

func (e *problem) Unwrap() error { return e.err }

// ProblemError returns the problem, for Echo's RFC 9457 handler.
func (e *problem) ProblemError() *echo.ProblemError {
	return &echo.ProblemError{Type: e.p.Type, Title: e.p.Title, Status: e.p.Status, Detail: e.p.Detail}
}

// ProblemBusyHandler answers httpguard.DefaultBusyHandler's problem.
func ProblemBusyHandler(c *echo.Context, retryAfter time.Duration, err error) error {
	httpguard.DefaultBusyHandler(c.Response(), c.Request(), retryAfter, err)
	return nil
}

// ProblemErrorHandler answers httpguard.DefaultErrorHandler's problem.
func ProblemErrorHandler(c *echo.Context, err error) error {
	httpguard.DefaultErrorHandler(c.Response(), c.Request(), err)
	return nil
}
