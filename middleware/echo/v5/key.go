package echolock

import (
	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/middleware/guard"
	"github.com/syncguard-go/syncguard/middleware/internal/echocore"
)

var keys = echocore.Keys[*echo.Context, KeyExtractor]{
	Request: (*echo.Context).Request, ParamOf: (*echo.Context).Param, FormOf: (*echo.Context).FormValue}

// FromParam reads the path parameter name, such as "id" in "/orders/:id".
func FromParam(name string) KeyExtractor { return keys.Param(name) }

// FromHeader reads the header name as written.
func FromHeader(name string) KeyExtractor { return keys.OnRequest(guard.FromHeader(name)) }

// FromIdempotencyKey reads the Idempotency-Key header.
func FromIdempotencyKey() KeyExtractor { return keys.OnRequest(guard.FromIdempotencyKey()) }

// FromQuery reads the query parameter name.
func FromQuery(name string) KeyExtractor { return keys.OnRequest(guard.FromQuery(name)) }

// FromCookie reads the request cookie name.
func FromCookie(name string) KeyExtractor { return keys.OnRequest(guard.FromCookie(name)) }

// FromForm reads the form value name; it parses the request body.
func FromForm(name string) KeyExtractor { return keys.Form(name) }

// Compose joins the results of fns into one key, escaping each part.
func Compose(fns ...KeyExtractor) KeyExtractor { return echocore.Compose[*echo.Context](fns...) }
