package ginlock

import (
	"time"

	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/settings"
)

// DefaultBusyHandler answers guard.DefaultBusyHandler's problem
// (409, or 429 for a limit, with Retry-After) and aborts c.
func DefaultBusyHandler(c *gin.Context, retryAfter time.Duration, err error) {
	guard.DefaultBusyHandler(c.Writer, c.Request, retryAfter, err)
	c.Abort()
}

// DefaultErrorHandler answers guard.DefaultErrorHandler's problem
// and aborts c.
func DefaultErrorHandler(c *gin.Context, err error) {
	guard.DefaultErrorHandler(c.Writer, c.Request, err)
	c.Abort()
}

// WithBusyHandler replaces DefaultBusyHandler.
func WithBusyHandler(h BusyHandler) Option { return func(c *config) { c.Busy = h } }

// WithErrorHandler replaces DefaultErrorHandler.
func WithErrorHandler(h ErrorHandler) Option { return func(c *config) { c.Error = h } }

// WithProblemTypeBase makes the default answers' problem types uri
// followed by their names.
func WithProblemTypeBase(uri string) Option { return set(settings.Problems(uri)) }
