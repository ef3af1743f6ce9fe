package httpguard_test

import (
	"net/http"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/httpguard"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

// The package comment's snippet (doc.go), kept compiling.
func docHTTPGuard(backend lock.Backend, userID httplock.ScopeFunc) (func(http.Handler) http.Handler, error) {
	// README: httpguard-doc
	mw, err := httplock.New(backend,
		httpguard.FromIdempotencyKey(),
		httplock.WithScope(userID),
		httplock.WithReplay(httpguard.DefaultReplayTTL))
	// END README
	return mw, err
}
