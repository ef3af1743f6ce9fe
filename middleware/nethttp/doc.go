// Package httplock is net/http middleware that runs each request under a
// distributed lock on a key taken from the request, such as an
// Idempotency-Key header, an order id in the path or a user id: one request
// at a time per key, across every instance that shares the lock backend.
//
//	mw, err := httplock.New(backend, httplock.WithKeyFunc(httplock.FromHeader("Idempotency-Key")))
//	if err != nil {
//		log.Fatal(err)
//	}
//	http.Handle("POST /orders", mw(ordersHandler))
//
// While the handler runs, the lease is kept alive and reachable with
// lock.LeaseFrom(r.Context()), for fenced writes; if it is lost, the
// request's context is cancelled (cause lock.ErrLeaseLost). The lease is
// released on a context of its own when the handler returns or panics.
// The lock key is the prefix, the route, the principal ([WithScope]) and
// the key, each byte for byte. Answers that do not reach the handler (409
// busy, 400 bad key, 401 no principal, 503 backend down, ...) are RFC 9457
// problem details, each replaceable ([WithBusyHandler], [WithErrorHandler]).
//
// [WithReplay] makes requests idempotent: the first response is stored
// with the release, and a retry with the key gets it back byte for byte
// without running the handler. Keys then belong to the authenticated
// principal:
//
//	mw, err := httplock.New(backend,
//		httplock.WithKeyFunc(httplock.FromIdempotencyKey()),
//		httplock.WithScope(userID), // the user your authentication middleware established
//		httplock.WithReplay(httplock.DefaultReplayTTL))
//
// [WithLimit](n) makes the key a concurrency limit: at most n requests per
// key in the handler at once, such as 3 exports per user:
//
//	mw, err := httplock.New(backend,
//		httplock.WithKeyFunc(userID), // the authenticated user, from your authentication middleware
//		httplock.WithLimit(3))
//
// For a key per request, build the backend with striped fence counters:
//
//	backend, err := redisbackend.New(client, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
//
// docs/http.md has the options, the answers, the guarantees of replay mode
// and where they end.
package httplock
