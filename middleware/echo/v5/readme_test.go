package echolock_test

import (
	"github.com/labstack/echo/v5"

	"github.com/syncguard-go/syncguard/lock"
	echolock "github.com/syncguard-go/syncguard/middleware/echo/v5"
)

// The docs' and the package comment's Echo v5 snippets, kept compiling;
// testkit/readme checks that they quote these regions verbatim.
func docEchoV5(backend lock.Backend, e *echo.Echo, createOrder echo.HandlerFunc) {
	// README: echov5-doc
	e.POST("/orders/:id", createOrder, echolock.New(backend, echolock.FromParam("id")))
	// END README
}

func docEchoV5Replay(backend lock.Backend, e *echo.Echo, createOrder echo.HandlerFunc, userID echolock.KeyExtractor) error {
	// README: echov5-replay
	e.HTTPErrorHandler = echo.ProblemDetailsHTTPErrorHandler(false) // refusals as RFC 9457 problems
	mw, err := echolock.Config{
		Backend:   backend,
		KeyLookup: "idempotency:Idempotency-Key",
		Scope:     userID, // the user your authentication middleware established
		Replay:    &echolock.ReplayConfig{},
	}.ToMiddleware()
	if err != nil {
		return err // an InvalidArgument *lock.Error naming the field
	}
	e.POST("/orders", createOrder, mw)
	// END README
	return nil
}
