package echolock

import (
	"fmt"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
)

// onRequest reads the key from the request with f, httpguard's key
// function.
func onRequest(f httpguard.KeyFunc) KeyExtractor {
	return func(c echo.Context) (string, error) { return f(c.Request()) }
}

// FromParam reads the path parameter name, such as "id" in "/orders/:id".
func FromParam(name string) KeyExtractor {
	return func(c echo.Context) (string, error) {
		v := c.Param(name)
		if v == "" {
			return "", httpguard.Missing("path parameter", name)
		}
		return v, nil
	}
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
func FromForm(name string) KeyExtractor {
	return func(c echo.Context) (string, error) {
		v := c.FormValue(name)
		if v == "" {
			return "", httpguard.Missing("form value", name)
		}
		return v, nil
	}
}

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
	"idempotency": func(name string) KeyExtractor { return onRequest(httpguard.FromIdempotencyHeader(name)) },
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
	var parts []KeyExtractor
	for i, src := range strings.Split(c.KeyLookup, ",") {
		src = strings.TrimSpace(src)
		kind, name, _ := strings.Cut(src, ":")
		if problem := lookupProblem(i, src, kind, name); problem != "" {
			return nil, lockdriver.InvalidArgument("config", fmt.Sprintf("Config.KeyLookup %q: %s", c.KeyLookup, problem))
		}
		parts = append(parts, lookupSources[kind](name))
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return Compose(parts...), nil
}

// lookupProblem says what is wrong with the part src (number i) of a
// KeyLookup, or "".
func lookupProblem(i int, src, kind, name string) string {
	header := kind == "header" || kind == "idempotency"
	switch _, known := lookupSources[kind]; {
	case src == "":
		return fmt.Sprintf("part %d is empty", i+1)
	case !strings.Contains(src, ":"):
		return fmt.Sprintf("part %q is not <source>:<name>, such as idempotency:Idempotency-Key or param:id", src)
	case !known:
		return fmt.Sprintf("part %q: unknown source %q (want header, idempotency, param, query, form or cookie)", src, kind)
	case name == "":
		return fmt.Sprintf("part %q has no name after %q", src, kind+":")
	case strings.TrimSpace(name) != name:
		return fmt.Sprintf("part %q: the name has leading or trailing space", src)
	case kind == "header" && strings.Contains(name, ":"):
		return fmt.Sprintf("part %q: a header value prefix (Echo's header:<name>:<prefix>) is not supported", src)
	case header && !wire.ValidHeaderName(name):
		return fmt.Sprintf("part %q: %q is not a valid header name", src, name)
	}
	return ""
}
