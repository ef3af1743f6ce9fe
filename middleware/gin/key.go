package ginlock

import (
	"github.com/gin-gonic/gin"

	"github.com/syncguard-go/syncguard/middleware/guard"
)

// FromRequest reads the key with f, guard's key function of an
// *http.Request.
func FromRequest(f guard.KeyFunc) KeyFunc {
	return func(c *gin.Context) (string, error) { return f(c.Request) }
}

// FromParam reads the path parameter name, such as "id" in "/orders/:id".
func FromParam(name string) KeyFunc {
	return func(c *gin.Context) (string, error) {
		if v := c.Param(name); v != "" {
			return v, nil
		}
		return "", guard.Missing("path parameter", name)
	}
}

// FromHeader reads the header name as written (guard.FromHeader).
func FromHeader(name string) KeyFunc { return FromRequest(guard.FromHeader(name)) }

// FromIdempotencyKey reads the Idempotency-Key header as the IETF draft
// defines it (guard.FromIdempotencyKey).
func FromIdempotencyKey() KeyFunc { return FromRequest(guard.FromIdempotencyKey()) }

// FromQuery reads the query parameter name.
func FromQuery(name string) KeyFunc { return FromRequest(guard.FromQuery(name)) }

// Compose joins the results of fns into one key, escaping each part
// (guard.Compose).
func Compose(fns ...KeyFunc) KeyFunc {
	parts := make([]func(*gin.Context) (string, error), len(fns))
	for i, f := range fns {
		parts[i] = f
	}
	return guard.Compose(parts...)
}
