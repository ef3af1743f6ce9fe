// Package guard is what syncguard's request adapters share: httplock
// (net/http), echolock (Echo v4 and v5), ginlock (gin) and grpclock
// (gRPC). It declares the errors a request or call can be refused with,
// the answers and their problem types, the replay headers, the defaults
// and the key functions of an *http.Request, once.
//
// The options are not here: each adapter declares its own Option type
// (or Config), so an option of one adapter does not compile with another,
// and its users find every option in their adapter's documentation:
//
//	mw, err := httplock.New(backend,
//		guard.FromIdempotencyKey(),
//		httplock.WithScope(userID),
//		httplock.WithReplay(guard.DefaultReplayTTL))
//
// docs/http.md and docs/grpc.md have the options, the answers and the
// guarantees of replay mode; middleware/ADAPTERS.md tells how to write an
// adapter.
package guard
