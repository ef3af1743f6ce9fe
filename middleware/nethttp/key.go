package httplock

import (
	"net/http"

	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// FromHeader returns a KeyFunc reading the first value of the request
// header name, such as "Idempotency-Key". A missing header is an error.
func FromHeader(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		v := r.Header.Get(name)
		if v == "" {
			return "", guard.Missing("header", name)
		}
		return v, nil
	}
}

// FromPathValue returns a KeyFunc reading the wildcard name of the route
// pattern that matched (http.Request.PathValue, Go 1.22 ServeMux
// patterns such as "POST /orders/{id}"). A missing value is an error.
func FromPathValue(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		v := r.PathValue(name)
		if v == "" {
			return "", guard.Missing("path value", name)
		}
		return v, nil
	}
}

// FromQuery returns a KeyFunc reading the first value of the URL query
// parameter name, such as "order" in "/pay?order=42". A missing or empty
// value is an error.
func FromQuery(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		v := r.URL.Query().Get(name)
		if v == "" {
			return "", guard.Missing("query parameter", name)
		}
		return v, nil
	}
}

// Compose returns a KeyFunc joining the results of fns with ':', such as
// Compose(FromPathValue("tenant"), FromHeader("Idempotency-Key")). Each part is
// escaped first ('\' becomes `\\`, ':' becomes `\:`), so distinct tuples of
// parts never give one key: tenant "a:b" with key "c" is `a\:b:c`, tenant
// "a" with key "b:c" is `a:b\:c`. Parts without '\' or ':' read as
// written ("acme" and "42" give "acme:42"). An error or an empty result
// from any of them is an error.
func Compose(fns ...KeyFunc) KeyFunc {
	parts := make([]func(*http.Request) (string, error), len(fns))
	for i, f := range fns {
		parts[i] = f
	}
	return guard.Compose(parts...)
}
