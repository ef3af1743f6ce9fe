package httplock

import (
	"net/http"

	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// FromHeader returns a KeyFunc reading the first value of the request
// header name, as written. A missing header is an error. For the
// Idempotency-Key header, use FromIdempotencyKey, which parses the value
// as the IETF draft defines it, so that "k1" and k1 are one key, and
// rejects several header lines and malformed keys.
func FromHeader(name string) KeyFunc {
	return func(r *http.Request) (string, error) {
		v := r.Header.Get(name)
		if v == "" {
			return "", guard.Missing("header", name)
		}
		return v, nil
	}
}

// FromIdempotencyKey returns a KeyFunc reading the Idempotency-Key
// header as the IETF httpapi Idempotency-Key draft defines it: one header
// line whose value is a structured-field string. The request
//
//	POST /orders HTTP/1.1
//	Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"
//
// gives the key 8e03978e-40d5-43e8-bc93-6894a57f9324. `\"` and `\\` in the
// string are unescaped, and parameters after it ("k1";a=1) are ignored.
// Beyond the draft, an unquoted value (Idempotency-Key: abc-123, as many
// clients send) is the key as written when it has no space, comma,
// semicolon or double quote; the quoted and the bare form of a key give
// the same key. The key must be 1 to 255 printable ASCII characters.
//
// A missing header, several Idempotency-Key header lines or a malformed
// value is an error with lock.CodeInvalidArgument (answered 400); its
// message says what is wrong and never contains the value.
func FromIdempotencyKey() KeyFunc {
	return func(r *http.Request) (string, error) {
		return guard.IdempotencyKey(r.Header, guard.HeaderIdempotencyKey)
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
