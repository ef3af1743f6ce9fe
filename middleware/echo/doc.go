// Package echolock is Echo (v4) middleware that runs each request under
// a distributed lock on a key taken from the request: one request at a
// time per key, across every instance that shares the lock backend.
//
//	e.POST("/orders/:id", createOrder, echolock.New(backend, echolock.FromParam("id")))
//
// It follows Echo's conventions: [Config] with Skipper, [DefaultConfig],
// [New], [NewWithConfig] and [Config.ToMiddleware]. Refusals are
// *echo.HTTPError values for the application's HTTPErrorHandler, or
// problem details ([ProblemBusyHandler]). [LeaseFrom] gives the handler
// its lease. Config.Replay makes requests idempotent; Config.Limit makes
// the key a concurrency limit. The errors, answers, headers and defaults
// are httpguard's; docs/http.md has the fields and the guarantees.
package echolock
