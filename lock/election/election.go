package election

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// ErrNoLeader is returned by LeaderOf when nobody leads the key.
var ErrNoLeader = errors.New("election: no leader")

// MinTTL is the shortest term Lead accepts (lock.WithTTL). A shorter term
// is within the clock tolerance (lockdriver.TimeTolerance) that observers
// wait past a term's expiry, and one slow round trip of its heartbeat
// would lose it.
const MinTTL = time.Second

// MaxIdentityBytes is the longest identity Lead accepts, in bytes.
const MaxIdentityBytes = 256

// Leader describes a term: who leads, with which fence, until when.
type Leader struct {
	// Identity is the leader's identity as given to Lead; empty when the
	// backend does not store identities (it is not a Store).
	Identity string
	// Fence is the term's fencing token.
	Fence lock.Fence
	// ExpiresAt is when the term ends unless the leader extends it, by the
	// backend's clock.
	ExpiresAt time.Time
}

// Store is the optional lock.Backend extension that makes elections cheap
// and tells who leads; redisbackend.Backend implements it. It is found
// under lock.WithHooks too. On a Backend that neither is nor wraps a
// Store, identities are not stored and observers and candidates look at
// the key when the term's expiry passes.
type Store interface {
	lock.Backend
	// Proclaim stores identity with the live lease term of its key and
	// publishes a notice of the term to the key's watchers; the leader
	// calls it when its term starts and after each extension. It returns
	// an error matching lock.ErrNotHeld when term is not the live lease.
	Proclaim(ctx context.Context, term lock.Lease, identity string) error
	// LookupOwner is LookupKey with the identity stored with the lease
	// ("" when none was).
	LookupOwner(ctx context.Context, key string) (identity string, info *lock.Info, err error)
	// Watch calls notify with each notice of key: a live term (its fence,
	// expiry and identity), a term that ended (zero expiresAt), or notices
	// that may have been missed (empty fence: read the key). notify must
	// return at once and must not call the Store. It returns an error
	// matching errors.ErrUnsupported when the Store cannot watch.
	Watch(key string, notify func(fence lock.Fence, expiresAt time.Time, identity string)) (stop func(), err error)
	// Announce publishes the notice that term ended; the leader calls it
	// after releasing the term.
	Announce(ctx context.Context, term lock.Lease) error
}

// storeOf returns b as a Store: b itself, or the backend its hooks wrap
// (lock.WithHooks carries lock's extensions only); nil when neither is.
// Notices and identities then bypass the hooks, which observe lock
// operations.
func storeOf(b lock.Backend) Store {
	for b != nil {
		if s, ok := b.(Store); ok {
			return s
		}
		u, ok := b.(interface{ Unwrap() lock.Backend })
		if !ok {
			return nil
		}
		b = u.Unwrap()
	}
	return nil
}
