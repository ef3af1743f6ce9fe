// Package echolock is Echo (v4) middleware that runs each request under
// a distributed lock on a key taken from the request:
//
//	e.POST("/orders/:id", createOrder, echolock.New(backend, echolock.FromParam("id")))
//
// It follows Echo's conventions (Config, DefaultConfig, ToMiddleware).
// The errors, answers and defaults are guard's; docs/http.md has the
// fields and the guarantees.
package echolock
