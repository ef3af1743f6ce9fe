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
// header name, such as "Idempotency-Key". A missing header is an error.
func FromHeader(name string) KeyExtractor {
	return func(c echo.Context) (string, error) {
		v := c.Request().Header.Get(name)
		if v == "" {
			return "", guard.Missing("header", name)
		}
		return v, nil
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
