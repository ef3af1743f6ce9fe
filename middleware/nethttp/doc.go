// Package httplock is net/http middleware that runs each request under a
// distributed lock on a key taken from the request: one request at a
// time per key, across every instance that shares the lock backend.
//
//	mw, err := httplock.New(backend, httplock.FromHeader("Idempotency-Key"))
//	if err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("POST /orders", mw(ordersHandler))
//
// The handler's context carries the lease (lock.LeaseFrom) and ends,
// with cause lock.ErrLeaseLost, if the lease is lost. Replay makes
// requests idempotent; keys then belong to the authenticated principal:
//
//	mw, err := httplock.New(backend,
//		httplock.FromIdempotencyKey(),
//		httplock.WithScope(userID), // the user your authentication middleware established
//		httplock.WithReplay(guard.DefaultReplayTTL))
//
// The options are this package's; the errors, answers, headers and
// defaults are guard's. docs/http.md has the options and the
// guarantees.
package httplock
