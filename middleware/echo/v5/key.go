package echolock

import (
	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/middleware/httpguard"
	"github.com/syncguard-go/syncguard/middleware/internal/echocore"
)

// keys makes the key extractors of *echo.Context.
var keys = echocore.Keys[*echo.Context, KeyExtractor]{
	Request: (*echo.Context).Request, ParamOf: (*echo.Context).Param, FormOf: (*echo.Context).FormValue}

// FromParam reads the path parameter name, such as "id" in "/orders/:id".
func FromParam(name string) KeyExtractor { return keys.Param(name) }

// FromHeader reads the header name as written (httpguard.FromHeader).
func FromHeader(name string) KeyExtractor { return keys.OnRequest(httpguard.FromHeader(name)) }

// FromIdempotencyKey reads the Idempotency-Key header as the IETF draft
// defines it (httpguard.FromIdempotencyKey).
func FromIdempotencyKey() KeyExtractor { return keys.OnRequest(httpguard.FromIdempotencyKey()) }

// FromQuery reads the query parameter name.
func FromQuery(name string) KeyExtractor { return keys.OnRequest(httpguard.FromQuery(name)) }

// FromCookie reads the request cookie name.
func FromCookie(name string) KeyExtractor { return keys.OnRequest(httpguard.FromCookie(name)) }

// FromForm reads the form value name (c.FormValue), which parses the
// request body.
func FromForm(name string) KeyExtractor { return keys.Form(name) }

// Compose joins the results of fns into one key, escaping each part
// (httpguard.Compose).
func Compose(fns ...KeyExtractor) KeyExtractor { return echocore.Compose[*echo.Context](fns...) }
