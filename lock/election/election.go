package election

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// ErrNoLeader is returned by LeaderOf when nobody leads the key.
var ErrNoLeader = errors.New("election: no leader")

// MinTTL is the shortest term Lead accepts. A shorter one is within the
// clock tolerance, and one slow heartbeat would lose it.
const MinTTL = time.Second

// MaxIdentityBytes is the longest identity Lead accepts, in bytes.
const MaxIdentityBytes = 256

// Leader describes a term: who leads, with which fence, until when.
type Leader struct {
	// Identity is the leader's, as given to Lead; empty when the backend
	// is not a Store.
	Identity string
	// Fence is the term's fencing token.
	Fence lock.Fence
	// ExpiresAt is the term's expiry, by the backend's clock.
	ExpiresAt time.Time
}

// Store is the optional lock.Backend extension that makes elections cheap
// and tells who leads; redisbackend.Backend implements it. Lead finds it
// under lock.WithHooks too.
type Store interface {
	lock.Backend
	// Proclaim stores identity with the live lease term and notifies the
	// key's watchers. It returns lock.ErrNotHeld when term is not live.
	Proclaim(ctx context.Context, term lock.Lease, identity string) error
	// LookupOwner is LookupKey with the identity stored with the lease.
	LookupOwner(ctx context.Context, key string) (identity string, info *lock.Info, err error)
	// Watch calls notify with each notice of key: a live term, a term
	// that ended with a zero expiresAt, or an empty fence when notices
	// may have been missed. notify must return at once.
	Watch(key string, notify func(fence lock.Fence, expiresAt time.Time, identity string)) (stop func(), err error)
	// Announce publishes the notice that term ended.
	Announce(ctx context.Context, term lock.Lease) error
}

// storeOf returns b as a Store, or the Store its hooks wrap; nil when
// there is none. Notices and identities bypass the hooks.
func storeOf(b lock.Backend) Store {
	s, _ := lockdriver.Extension[Store](b)
	return s
}
