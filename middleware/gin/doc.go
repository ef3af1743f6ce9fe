// Package ginlock is gin middleware that runs each request under a
// distributed lock on a key taken from the request:
//
//	mw, err := ginlock.New(backend, ginlock.FromParam("id"))
//	if err != nil {
//		log.Fatal(err)
//	}
//	r.POST("/orders/:id", mw, createOrder)
//
// Refusals abort the context and go on c.Errors. The options are this
// package's; the errors, answers and defaults are guard's.
// docs/http.md has the guarantees.
package ginlock
