// Package echolock is Echo (v4) middleware that runs each request under a
// distributed lock on a key taken from the request, such as an
// Idempotency-Key header, a path parameter or a user id: one request at a
// time per key, across every instance that shares the lock backend.
//
//	e.POST("/orders/:id", createOrder, echolock.New(backend, echolock.FromParam("id")))
//
// It follows Echo's middleware conventions: a [Config] with Skipper and
// BeforeFunc, [DefaultConfig], [New] and [NewWithConfig] (which panic on a
// bad configuration) and [Config.ToMiddleware] (which returns the error).
// Config.KeyLookup names the key in Echo's extractor syntax
// ("header:Idempotency-Key", "param:tenant,header:Idempotency-Key"). While
// the handler runs, the lease is kept alive and reachable with [LeaseFrom],
// for fenced writes; if it is lost, the request's context is cancelled
// (cause lock.ErrLeaseLost). The lock key is Prefix, the route, the
// principal (Config.Scope) and the key, each byte for byte. Answers that do
// not reach the handler are *echo.HTTPError values for Echo's
// HTTPErrorHandler, or RFC 9457 problem details ([ProblemBusyHandler]).
//
// Config.Replay makes requests idempotent: the first response is stored
// with the release, and a retry with the key gets it back byte for byte
// without running the handler. Keys then belong to the authenticated
// principal:
//
//	e.POST("/orders", createOrder, echolock.NewWithConfig(echolock.Config{
//		Backend:   backend,
//		KeyLookup: "idempotency:Idempotency-Key",
//		Scope:     userID,                   // the user your authentication middleware established
//		Replay:    &echolock.ReplayConfig{}, // 24h, default headers and limits
//	}))
//
// Config.Limit makes the key a concurrency limit: at most Limit requests
// per key in the handler at once, such as 3 exports per user:
//
//	e.POST("/exports", export, echolock.NewWithConfig(echolock.Config{
//		Backend:      backend,
//		KeyExtractor: userID, // the authenticated user, from your authentication middleware
//		Limit:        3,
//	}))
//
// For a key per request, build the backend with striped fence counters:
//
//	backend, err := redisbackend.New(client, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
//
// docs/http.md has the options, the answers, the guarantees of replay mode
// and where they end.
package echolock
