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
// returns the error instead). The key is named by Config.KeyLookup in the
// syntax of Echo's extractors, such as "header:Idempotency-Key" or
// "param:tenant,header:Idempotency-Key", or read by a [KeyExtractor].
//
// While the handler runs, the lease is kept alive by heartbeat (lock.Keep,
// through lock.Do) and is reachable with [LeaseFrom] (or
// lock.LeaseFrom(c.Request().Context()) from code that does not import
// echo), so the handler can pass its fence to fenced writes. The request seen by the handler
// (c.Request()) carries a context that is cancelled with a cause matching
// lock.ErrLeaseLost if the lease is lost. After the handler returns, or
// panics, the lease is released with a context of its own, so a client
// that hangs up does not leave the key locked until the TTL ends. The
// handler's error is returned unchanged, for Echo's HTTPErrorHandler
// (in replay mode it is rendered inside instead; see below).
//
// The lock key is Prefix, the request's route (the method and c.Path(),
// such as "POST /orders/:id"), the principal (with Config.Scope) and the
// extracted key, so two routes never share a key (Config.RouteScope turns
// that off; limits leave the route out by default).
//
// # Idempotent requests
//
// By itself the middleware serialises requests with one key and rejects
// concurrent duplicates; it does not make them idempotent: a retry after
// the first request finished runs the handler again. Config.Replay (a
// [ReplayConfig]) does: the first response is stored, atomically with the
// release, and later requests with the key get it back byte for byte
// (marked Idempotent-Replayed: true) without running the handler; the key
// reused for a different request is answered 422 ([ErrKeyReused]):
//
//	e.POST("/orders", createOrder, echolock.NewWithConfig(echolock.Config{
//		Backend:   backend,
//		KeyLookup: "idempotency:Idempotency-Key",
//		Scope:     userID,                   // the user your authentication middleware established
//		Replay:    &echolock.ReplayConfig{}, // 24h, default headers and limits
//	}))
//
// Keys belong to a principal: Config.Scope puts the authenticated user
// (or tenant, or API key id) into every key, so a client that sends
// another client's key gets a run of its own, never the other's response;
// take it from your authentication middleware (such as echo-jwt's
// context value), never from a header the client chooses. ToMiddleware
// rejects Replay without Scope, unless Config.Unscoped says the endpoint
// is public. The "idempotency:" KeyLookup source ([FromIdempotencyKey])
// reads the header as the IETF draft writes it (a structured-field
// string; a bare key is accepted too). A response too large to store is
// recorded as completed (a retry gets 409, never a second run); statuses
// that say "not now" (401, 408, 409, 423, 425, 429) and 5xx are not
// stored by default (ReplayConfig.Statuses); a response whose record is
// not stored goes out marked Idempotent-Not-Stored with the reason. In
// replay mode a handler's error is rendered inside the middleware (so
// that the answer is captured) and not returned as well.
//
// Requests that do not reach the handler get an *echo.HTTPError, as from
// Echo's own middleware, with the lock error as Internal, so the
// application's HTTPErrorHandler renders them (Echo's default writes
// {"message": ...}); the key never appears in the message:
//
//   - busy key: 409 Conflict; the Retry-After header is set on the
//     response before the error is returned, since an HTTPError carries
//     no headers: the seconds (rounded up, at least one) until the
//     holder's lease expires (the TTL when unknown), capped by the moving
//     average of how long this route's handlers held the lock;
//   - with Config.Limit, every slot of the key taken: 429 Too Many
//     Requests, Retry-After set the same way, from the earliest expiry
//     among the holders;
//   - missing or invalid key (empty, over 512 bytes after NFC, invalid
//     UTF-8, a malformed Idempotency-Key): 400 Bad Request, without any
//     call to the backend;
//   - with Config.Scope, no principal: 401 Unauthorized ([ErrScope]);
//   - a request body over an http.MaxBytesReader's limit: 413;
//   - backend failure: 503 Service Unavailable, or, with Config.FailOpen
//     (not with replay), the handler runs without a lease;
//   - with replay: 422 for a reused key, 409 for a completed request
//     whose response was too large to store ([ErrNotReplayable]), 413 for
//     a request body over the limit, 500 for a stored value that cannot be
//     read ([ErrBadRecord]);
//   - with a limit, a key held elsewhere as a plain lock
//     (lock.ErrKindMismatch): 500 Internal Server Error.
//
// Config.BusyHandler and Config.ErrorHandler replace these answers;
// [ProblemBusyHandler] and [ProblemErrorHandler] write the RFC 9457
// problem details (application/problem+json) that httplock answers with;
// Config.ProblemTypeBase turns their URN types into links to your
// documentation.
//
// # Concurrency limits
//
// Config.Limit makes the key a concurrency limit instead of a lock: at
// most Limit requests with one key run the handler at once, across every
// instance, such as at most 3 exports per user:
//
//	e.POST("/exports", export, echolock.NewWithConfig(echolock.Config{
//		Backend:      backend,
//		KeyExtractor: userID, // the authenticated user, from your authentication middleware
//		Limit:        3,
//	}))
//
// A limit counts what its key names on every route that uses the
// middleware: its key leaves the route out (Config.RouteScope puts it
// back), so "3 exports per user" holds across every export route.
//
// Each request in the handler holds a slot of its own: an ordinary lease,
// with its own fence, kept alive, reachable and released as a lock is. A
// request that finds every slot taken, after Config.Wait if set (a freed
// slot goes to the oldest waiter), gets the BusyHandler with an error
// matching [ErrLimitReached]: by default an *echo.HTTPError with 429;
// [ProblemBusyHandler] writes a problem+json body of type
// urn:syncguard:problem:concurrency-limit-reached. A limit does not
// combine with replay mode: ToMiddleware rejects Limit with Replay,
// because replay stores one response per key for requests that must run
// once, while a limit lets several run at once. A key is either a lock or
// a limit at a time: give limits a prefix or route of their own.
//
// # Unbounded keys
//
// A key per request, such as an Idempotency-Key, makes the key space
// unbounded, and with a per-key fence counter (redisbackend's default)
// every distinct key leaves a counter in Redis forever. For such keys build
// the backend with striped counters, which bound Redis to N counters while
// each key's fences still strictly increase:
//
//	backend, err := redisbackend.New(client, &redisbackend.Options{FenceStripes: redisbackend.DefaultFenceStripes})
//
// The middleware does not log a warning when a backend with per-key
// counters meets per-request keys: it cannot know a key's cardinality (an
// order id in "param:id" is bounded, "header:Idempotency-Key" is not, and
// a KeyExtractor is opaque), and it sees only a lock.Backend, which does
// not say how its fences are kept (a decorator such as otellock hides the
// redisbackend). A warning would fire on bounded keys and miss wrapped
// backends, so the documentation says it instead.
package echolock
