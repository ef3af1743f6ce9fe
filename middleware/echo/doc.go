// Package echolock is Echo (v4) middleware that runs each request under a
// distributed lock on a key taken from the request, such as an
// Idempotency-Key header, a path parameter or a user id: one request at a
// time per key, across every instance that shares the lock backend.
//
//	e.POST("/orders/:id", createOrder, echolock.New(backend, echolock.FromParam("id")))
//
// It follows Echo's middleware conventions: a [Config] with Skipper and
// BeforeFunc, [DefaultConfig], [New] and [NewWithConfig] (which panic on a
// bad configuration, like Echo's own) and [Config.ToMiddleware] (which
// returns the error instead).
//
// While the handler runs, the lease is kept alive by heartbeat (lock.Keep,
// through lock.Do) and is reachable with [LeaseFrom], so the handler can
// pass its fence to fenced writes. The request seen by the handler
// (c.Request()) carries a context that is cancelled with a cause matching
// lock.ErrLeaseLost if the lease is lost. After the handler returns, or
// panics, the lease is released with a context of its own, so a client
// that hangs up does not leave the key locked until the TTL ends. The
// handler's error is returned unchanged, for Echo's HTTPErrorHandler.
//
// Answers that do not reach the handler are RFC 9457 problem details
// (application/problem+json), and each can be replaced
// (Config.BusyHandler, Config.ErrorHandler):
//
//   - busy key: 409 Conflict with Retry-After, the seconds (rounded up)
//     until the holder's lease expires, or the TTL when unknown;
//   - missing or invalid key (empty, over 512 bytes after NFC, invalid
//     UTF-8): 400 Bad Request, without any call to the backend;
//   - backend failure: 503 Service Unavailable, or, with Config.FailOpen,
//     the handler runs without a lease.
package echolock
