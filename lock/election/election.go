package election

import (
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// ErrNoLeader is returned by LeaderOf when nobody leads the key.
var ErrNoLeader = errors.New("election: no leader")

// Leader describes a term: who leads, with which fence, until when.
type Leader struct {
	// Identity is the leader's identity as given to Lead; empty when the
	// backend does not store identities, or in the moment between a term's
	// grant and its identity being stored.
	Identity string
	// Fence is the term's fencing token.
	Fence lock.Fence
	// ExpiresAt is when the term ends unless the leader extends it, by the
	// backend's clock.
	ExpiresAt time.Time
}

// validate checks the arguments every function takes, before any I/O.
func validate(op string, b lock.Backend, key string) error {
	if b == nil {
		return lockdriver.InvalidArgument(op, "backend is nil")
	}
	if key == "" {
		return lockdriver.InvalidArgument(op, "key is empty")
	}
	if _, err := lockdriver.NormalizeKey(key); err != nil {
		return err
	}
	return nil
}
