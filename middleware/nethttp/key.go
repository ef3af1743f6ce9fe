package httplock

import (
	"net/http"

	"github.com/syncguard-go/syncguard/middleware/guard"
)

// FromHeader reads the header name as written (guard.FromHeader).
func FromHeader(name string) KeyFunc { return guard.FromHeader(name) }

// FromIdempotencyKey reads the Idempotency-Key header as the IETF draft
// defines it (guard.FromIdempotencyKey).
func FromIdempotencyKey() KeyFunc { return guard.FromIdempotencyKey() }

// FromQuery reads the query parameter name.
func FromQuery(name string) KeyFunc { return guard.FromQuery(name) }

// FromPathValue reads the wildcard name of the ServeMux pattern that
// matched, such as "id" in "POST /orders/{id}".
func FromPathValue(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		v := r.PathValue(name)
		if v == "" {
			return "", guard.Missing("path value", name)
		}
		return v, nil
	}
}

// Compose joins the results of fns into one key, escaping each part
// (guard.Compose).
func Compose(fns ...KeyFunc) KeyFunc {
	parts := make([]func(*http.Request) (string, error), len(fns))
	for i, f := range fns {
		parts[i] = f
	}
	return guard.Compose(parts...)
}
