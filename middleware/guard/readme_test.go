package guard_test

import (
	"net/http"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/middleware/guard"
	httplock "github.com/syncguard-go/syncguard/middleware/nethttp"
)

// The package comment's snippet (doc.go), kept compiling.
func docGuard(backend lock.Backend, userID httplock.ScopeFunc) (func(http.Handler) http.Handler, error) {
	// README: guard-doc
	mw, err := httplock.New(backend,
		guard.FromIdempotencyKey(),
		httplock.WithScope(userID),
		httplock.WithReplay(guard.DefaultReplayTTL))
	// END README
	return mw, err
}
