// Package httpguard is the surface shared by syncguard's HTTP adapters
// (httplock for net/http, echolock for Echo): the errors a request can be
// refused with, the answers and their problem types, the replay headers,
// the defaults and the options every adapter's New accepts.
//
// An adapter only translates its framework's request, response and error
// flow; what a request gets, and why, is declared here once:
//
//	mw, err := httplock.New(backend,
//		httplock.WithKeyFunc(httpguard.FromIdempotencyKey()),
//		httplock.WithScope(userID),
//		httpguard.WithReplay(httpguard.DefaultReplayTTL))
//
// docs/http.md has the options, the answers and the guarantees of replay
// mode; middleware/ADAPTERS.md tells how to write an adapter.
package httpguard
