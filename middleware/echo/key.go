package echolock

import (
	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// onRequest reads the key from the request with f, httpguard's key
// function.
func onRequest(f httpguard.KeyFunc) KeyExtractor {
	return func(c echo.Context) (string, error) { return f(c.Request()) }
}

// fromValue reads the value get gives for a name, a kind of request
// part.
func fromValue(kind string, get func(echo.Context, string) string) func(name string) KeyExtractor {
	return func(name string) KeyExtractor {
		return func(c echo.Context) (string, error) {
			if v := get(c, name); v != "" {
				return v, nil
			}
			return "", httpguard.Missing(kind, name)
		}
	}
}

// FromParam reads the path parameter name, such as "id" in "/orders/:id".
func FromParam(name string) KeyExtractor {
	return fromValue("path parameter", echo.Context.Param)(name)
}

// FromHeader reads the header name as written (httpguard.FromHeader).
func FromHeader(name string) KeyExtractor { return onRequest(httpguard.FromHeader(name)) }

// FromIdempotencyKey reads the Idempotency-Key header as the IETF draft
// defines it (httpguard.FromIdempotencyKey).
func FromIdempotencyKey() KeyExtractor { return onRequest(httpguard.FromIdempotencyKey()) }

// FromQuery reads the query parameter name.
func FromQuery(name string) KeyExtractor { return onRequest(httpguard.FromQuery(name)) }

// FromCookie reads the request cookie name.
func FromCookie(name string) KeyExtractor { return onRequest(httpguard.FromCookie(name)) }

// FromForm reads the form value name (c.FormValue: the body of a form,
// then the query), which parses the request body.
func FromForm(name string) KeyExtractor { return fromValue("form value", echo.Context.FormValue)(name) }

// Compose joins the results of fns into one key, escaping each part
// (httpguard.Compose).
func Compose(fns ...KeyExtractor) KeyExtractor {
	parts := make([]func(echo.Context) (string, error), len(fns))
	for i, f := range fns {
		parts[i] = f
	}
	return httpguard.Compose(parts...)
}

// lookupSources maps a KeyLookup source to the extractor of a name.
var lookupSources = map[string]func(name string) KeyExtractor{
	"header":      FromHeader,
	"idempotency": func(n string) KeyExtractor { return onRequest(httpguard.FromIdempotencyHeader(n)) },
	"param":       FromParam,
	"query":       FromQuery,
	"form":        FromForm,
	"cookie":      FromCookie,
}

// key returns c's key extractor, from KeyExtractor or KeyLookup (nil
// when neither is set, for the guard to refuse).
func (c Config) key() (KeyExtractor, error) {
	switch {
	case c.KeyLookup != "" && c.KeyExtractor != nil:
		return nil, lockdriver.InvalidArgument("config", "Config.KeyLookup and Config.KeyExtractor are both set; set one")
	case c.KeyLookup == "":
		return c.KeyExtractor, nil
	}
	return guard.ParseLookup[echo.Context]("Config.KeyLookup", c.KeyLookup, lookupSources)
}
