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
// While the handler runs, the lease is kept alive by heartbeat (lock.Keep,
// through lock.Do) and is reachable with lock.LeaseFrom(r.Context()), so
// the handler, or data-layer code it calls with that context, can pass its
// fence to fenced writes. If the lease is lost anyway, the
// request's context is cancelled with a cause matching lock.ErrLeaseLost
// (context.Cause). After the handler returns, or panics, the lease is
// released with a context of its own, so a client that hangs up does not
// leave the key locked until the TTL ends.
//
// The lock key is the prefix, the request's route (the method and the
// ServeMux pattern, such as "POST /orders/{id}"), the principal (with
// [WithScope]) and the key function's result, so two routes never share a
// key ([WithRouteScope](false) turns that off; limits leave the route out
// by default). Wrap the handlers you register, not the ServeMux: in front of
// the mux no pattern has matched yet, and the escaped request path stands
// in for it.
//
// # Idempotent requests
//
// By itself the middleware serialises requests with one key and rejects
// concurrent duplicates; it does not make them idempotent: a retry after
// the first request finished runs the handler again. [WithReplay] does:
// the first response is stored, atomically with the release, and later
// requests with the key get it back byte for byte (marked
// Idempotent-Replayed: true) without running the handler; the key reused
// for a different request is answered 422:
//
//	mw, err := httplock.New(backend,
//		httplock.WithKeyFunc(httplock.FromIdempotencyKey()),
//		httplock.WithScope(userID), // the user your authentication middleware established
//		httplock.WithReplay(httplock.DefaultReplayTTL))
//
// Keys belong to a principal: [WithScope] puts the authenticated user (or
// tenant, or API key id) into every key, so a client that sends another
// client's key gets a run of its own, never the other's response; take it
// from your authentication middleware, never from a header the client
// chooses. New rejects replay without a scope, unless [Unscoped] says the
// endpoint is public. [FromIdempotencyKey] reads the header as the IETF
// draft writes it (a structured-field string, such as "8e03978e"; a bare
// key is accepted too). A response too large to store is recorded as
// completed (a retry gets 409, never a second run); statuses that say
// "not now" (401, 408, 409, 423, 425, 429) and 5xx are not stored by
// default ([WithReplayStatuses]); a response whose record is not stored
// goes out marked Idempotent-Not-Stored with the reason.
//
// Answers that do not reach the handler are RFC 9457 problem details
// (application/problem+json; [WithProblemTypeBase] turns their URN types
// into links to your documentation), and each can be replaced
// ([WithBusyHandler], [WithErrorHandler]):
//
//   - busy key: 409 Conflict with Retry-After: the seconds (rounded up, at
//     least one) until the holder's lease expires (the TTL when unknown),
//     capped by the moving average of how long this route's handlers held
//     the lock, so a client is not told to wait 30s for a 35ms handler;
//   - with [WithLimit], every slot of the key taken: 429 Too Many
//     Requests with Retry-After, computed as for 409 from the earliest
//     expiry among the holders;
//   - missing or invalid key (empty, over 512 bytes after NFC, invalid
//     UTF-8, a malformed Idempotency-Key): 400 Bad Request, without any
//     call to the backend;
//   - with [WithScope], no principal: 401 Unauthorized ([ErrScope]);
//   - a request body over an http.MaxBytesReader's limit: 413;
//   - backend failure: 503 Service Unavailable, or, with
//     [WithFailOpen](true) (not with replay), the handler runs without a
//     lease;
//   - with replay: 422 for a reused key ([ErrKeyReused]), 409 without
//     Retry-After for a completed request whose response was too large to
//     store ([ErrNotReplayable]), 413 for a request body over the limit,
//     500 for a stored value that cannot be read ([ErrBadRecord]);
//   - with a limit, a key held elsewhere as a plain lock
//     (lock.ErrKindMismatch): 500 Internal Server Error.
//
// # Concurrency limits
//
// [WithLimit](n) makes the key a concurrency limit instead of a lock: at
// most n requests with one key run the handler at once, across every
// instance, such as at most 3 exports per user:
//
//	mw, err := httplock.New(backend,
//		httplock.WithKeyFunc(userID), // the authenticated user, from your authentication middleware
//		httplock.WithLimit(3))
//
// A limit counts what its key names on every route that uses the
// middleware: its key leaves the route out ([WithRouteScope](true) puts
// it back), so "3 exports per user" holds across every export route, and
// a middleware in front of a ServeMux does not make each path a limit of
// its own.
//
// Each request in the handler holds a slot of its own: an ordinary lease,
// with its own fence, kept alive, reachable and released as a lock is. A
// request that finds every slot taken, after [WithWait] if given (a freed
// slot goes to the oldest waiter), is answered 429 with a problem type of
// its own, urn:syncguard:problem:concurrency-limit-reached; a
// [BusyHandler] tells it from a busy lock with errors.Is(err,
// [ErrLimitReached]). A limit does not combine with replay mode: New
// rejects WithLimit with WithReplay, because replay stores one response
// per key for requests that must run once, while a limit lets n run at
// once. A key is either a lock or a limit at a time: give limits a prefix
// or route of their own.
//
// The middleware depends on lock.Backend only, so any backend (or a
// decorated one, such as an OpenTelemetry wrapper) plugs in.
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
// counters meets per-request keys: it cannot know a key function's
// cardinality (FromPathValue("id") on an order id is bounded,
// FromHeader("Idempotency-Key") is not, and a KeyFunc is opaque), and it
// sees only a lock.Backend, which does not say how its fences are kept (a
// decorator such as otellock hides the redisbackend). A warning would fire
// on bounded keys and miss wrapped backends, so the documentation says it
// instead.
package httplock
