package echolock_test

import (
	"time"

	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The README's Echo snippet, kept compiling; testkit/readme checks that
// README.md quotes the marked region verbatim.
func readmeEcho(backend lock.Backend, e *echo.Echo, pay echo.HandlerFunc) {
	// README: echo
	e.POST("/orders/:id/pay", pay, echolock.New(backend, echolock.FromParam("id")))
	// in pay: l, _ := echolock.LeaseFrom(c)
	// END README
}

// The package comment's snippets (doc.go), kept compiling the same way.
func docEcho(backend lock.Backend, e *echo.Echo, createOrder echo.HandlerFunc) {
	// README: echo-doc
	e.POST("/orders/:id", createOrder, echolock.New(backend, echolock.FromParam("id")))
	// END README
}

func docEchoStripes(client *redis.Client) (*redisbackend.Backend, error) {
	// README: echo-doc-stripes
	backend, err := redisbackend.New(client, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
	// END README
	return backend, err
}

func docEchoReplay(backend lock.Backend, e *echo.Echo, createOrder echo.HandlerFunc, userID echolock.KeyExtractor) {
	// README: echo-doc-replay
	e.POST("/orders", createOrder, echolock.NewWithConfig(echolock.Config{
		Backend:   backend,
		KeyLookup: "idempotency:Idempotency-Key",
		Scope:     userID,                   // the user your authentication middleware established
		Replay:    &echolock.ReplayConfig{}, // 24h, default headers and limits
	}))
	// END README
}

func docEchoLimit(backend lock.Backend, e *echo.Echo, export echo.HandlerFunc, userID echolock.KeyExtractor) {
	// README: echo-doc-limit
	e.POST("/exports", export, echolock.NewWithConfig(echolock.Config{
		Backend:      backend,
		KeyExtractor: userID, // the authenticated user, from your authentication middleware
		Limit:        3,
	}))
	// END README
}

// The README's limit snippet.
func readmeEchoLimit(backend lock.Backend, e *echo.Echo, export echo.HandlerFunc, userID echolock.KeyExtractor) {
	// README: echo-limit
	exports := echolock.NewWithConfig(echolock.Config{
		Backend:      backend,
		KeyExtractor: userID, // the authenticated user, from your authentication middleware
		Prefix:       "exports:",
		Limit:        3, // at most 3 exports per user at once; the 4th: *echo.HTTPError 429
	})
	e.POST("/exports", export, exports)
	e.POST("/reports/:id/export", export, exports) // the same limit: a limit's key leaves the route out
	// END README
}

// The README's replay snippet.
func readmeEchoReplay(backend lock.Backend, e *echo.Echo, createOrder echo.HandlerFunc, userID echolock.KeyExtractor) {
	// README: echo-replay
	e.POST("/orders", createOrder, echolock.NewWithConfig(echolock.Config{
		Backend:   backend,
		KeyLookup: "idempotency:Idempotency-Key",
		Scope:     userID, // keys belong to the authenticated user
		Wait:      5 * time.Second,
		Replay:    &echolock.ReplayConfig{TTL: 24 * time.Hour}, // zero fields: the defaults
	}))
	// END README
}
