// Package echolock is Echo v5 middleware that runs each request under a
// distributed lock on a key taken from the request:
//
//	e.POST("/orders/:id", createOrder, echolock.New(backend, echolock.FromParam("id")))
//
// It is middleware/echo for Echo v5; docs/http.md has the fields.
package echolock
