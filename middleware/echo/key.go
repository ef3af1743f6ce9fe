package echolock

import (
	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// FromParam returns a KeyExtractor reading the path parameter name, such
// as "id" for the route "/orders/:id". A missing value is an error.
func FromParam(name string) KeyExtractor {
	return func(c echo.Context) (string, error) {
		v := c.Param(name)
		if v == "" {
			return "", guard.Missing("path parameter", name)
		}
		return v, nil
	}
}

// FromHeader returns a KeyExtractor reading the first value of the request
// header name, as written. A missing header is an error. For the
// Idempotency-Key header, use FromIdempotencyKey (KeyLookup
// "idempotency:Idempotency-Key"), which parses the value as the IETF
// draft defines it, so that "k1" and k1 are one key, and rejects several
// header lines and malformed keys.
func FromHeader(name string) KeyExtractor {
	return func(c echo.Context) (string, error) {
		v := c.Request().Header.Get(name)
		if v == "" {
			return "", guard.Missing("header", name)
		}
		return v, nil
	}
}

// FromIdempotencyKey returns a KeyExtractor reading the Idempotency-Key
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
// the same key. The key must be 1 to 255 printable ASCII characters. The
// KeyLookup source "idempotency:<header name>" reads another header this
// way.
//
// A missing header, several Idempotency-Key header lines or a malformed
// value is an error with lock.CodeInvalidArgument (answered 400); its
// message says what is wrong and never contains the value.
func FromIdempotencyKey() KeyExtractor {
	return fromIdempotencyHeader(guard.HeaderIdempotencyKey)
}

// fromIdempotencyHeader is FromIdempotencyKey on the header name, for the
// KeyLookup source "idempotency:<name>".
func fromIdempotencyHeader(name string) KeyExtractor {
	return func(c echo.Context) (string, error) {
		return guard.IdempotencyKey(c.Request().Header, name)
	}
}

// FromQuery returns a KeyExtractor reading the first value of the query
// parameter name. A missing value is an error.
func FromQuery(name string) KeyExtractor {
	return func(c echo.Context) (string, error) {
		v := c.QueryParam(name)
		if v == "" {
			return "", guard.Missing("query parameter", name)
		}
		return v, nil
	}
}

// FromForm returns a KeyExtractor reading the form value name (echo's
// Context.FormValue: the body of a url-encoded or multipart form, then
// the query). A missing value is an error. Reading it parses the request
// body, which the handler then reads through the parsed form, not raw.
func FromForm(name string) KeyExtractor {
	return func(c echo.Context) (string, error) {
		v := c.FormValue(name)
		if v == "" {
			return "", guard.Missing("form value", name)
		}
		return v, nil
	}
}

// FromCookie returns a KeyExtractor reading the value of the request
// cookie name. A missing cookie is an error.
func FromCookie(name string) KeyExtractor {
	return func(c echo.Context) (string, error) {
		ck, err := c.Cookie(name)
		if err != nil || ck.Value == "" {
			return "", guard.Missing("cookie", name)
		}
		return ck.Value, nil
	}
}

// Compose returns a KeyExtractor joining the results of fns with ':', such as
// Compose(FromParam("tenant"), FromHeader("Idempotency-Key")). Each part is
// escaped first ('\' becomes `\\`, ':' becomes `\:`), so distinct tuples of
// parts never give one key: tenant "a:b" with key "c" is `a\:b:c`, tenant
// "a" with key "b:c" is `a:b\:c`. Parts without '\' or ':' read as
// written ("acme" and "42" give "acme:42"). An error or an empty result
// from any of them is an error.
func Compose(fns ...KeyExtractor) KeyExtractor {
	parts := make([]func(echo.Context) (string, error), len(fns))
	for i, f := range fns {
		parts[i] = f
	}
	return guard.Compose(parts...)
}
