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

// Compose returns a KeyExtractor joining the results of fns with ':', such
// as Compose(FromParam("tenant"), FromHeader("Idempotency-Key")). An error
// or an empty result from any of them is an error.
func Compose(fns ...KeyExtractor) KeyExtractor {
	parts := make([]func(echo.Context) (string, error), len(fns))
	for i, f := range fns {
		parts[i] = f
	}
	return guard.Compose(parts...)
}
