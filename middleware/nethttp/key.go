package httplock

import (
	"net/http"

	"github.com/syncguard-go/syncguard/middleware/httpguard"
)

// FromHeader reads the header name as written (httpguard.FromHeader).
func FromHeader(name string) KeyFunc { return httpguard.FromHeader(name) }

// FromIdempotencyKey reads the Idempotency-Key header as the IETF draft
// defines it (httpguard.FromIdempotencyKey).
func FromIdempotencyKey() KeyFunc { return httpguard.FromIdempotencyKey() }

// FromQuery reads the query parameter name.
func FromQuery(name string) KeyFunc { return httpguard.FromQuery(name) }

// FromPathValue reads the wildcard name of the ServeMux pattern that
// matched, such as "id" in "POST /orders/{id}".
func FromPathValue(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		v := r.PathValue(name)
		if v == "" {
			return "", httpguard.Missing("path value", name)
		}
		return v, nil
	}
}

// Compose joins the results of fns into one key, escaping each part
// (httpguard.Compose).
func Compose(fns ...KeyFunc) KeyFunc {
	parts := make([]func(*http.Request) (string, error), len(fns))
	for i, f := range fns {
		parts[i] = f
	}
	return httpguard.Compose(parts...)
}
