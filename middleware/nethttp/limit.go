package httplock

import (
	"github.com/syncguard-go/syncguard/middleware/internal/guard"
)

// ErrLimitReached is matched (errors.Is) by the error a BusyHandler
// receives when every slot of the key's concurrency limit (WithLimit) is
// taken; the error matches lock.ErrLocked as well.
var ErrLimitReached = guard.ErrLimitReached

// WithLimit makes the key a concurrency limit instead of a lock: at most n
// requests with one key run the handler at once, across every instance
// sharing the backend, each under a slot of its own (an ordinary lease,
// with its own fence, kept alive and released like a lock; see
// lock.WithLimit). A request that finds all n slots taken, after the wait
// if WithWait is given, is answered 429 Too Many Requests with
// Retry-After (DefaultBusyHandler; err matches ErrLimitReached). For "at
// most 3 exports per user", key the requests by the authenticated user,
// from your authentication middleware (never a header the client
// chooses, which would let it evade its limit or use up another user's
// slots):
//
//	httplock.New(backend, httplock.WithKeyFunc(userID), httplock.WithLimit(3))
//
// The route is left out of a limit's key by default (WithRouteScope), so
// one limit holds across every route that uses the middleware.
//
// n must be between 1 and lockdriver.MaxLimit (New rejects anything else,
// including 0: leave the option out for no limit); the backend must be a
// lock.IDBackend (redisbackend.Backend is, and otellock.Wrap of one). A
// limit cannot be combined with WithReplay (New returns an error):
// replay stores one response per key for requests that must run once,
// while a limit lets n run at once. Each key is either a lock or a limit:
// a key locked elsewhere as a plain lock is answered 500
// (lock.ErrKindMismatch) until that lock ends. Use WithLimit rather than
// lock.WithLimit in WithLockOptions, which would give 409 answers.
func WithLimit(n int) Option {
	return optionFunc(func(c *config) { c.guard.Limit, c.limitSet = n, true })
}
