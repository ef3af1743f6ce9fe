package election

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
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

// validate checks the arguments every function takes, before any I/O.
func validate(op string, ctx context.Context, b lock.Backend, key string) error {
	switch {
	case ctx == nil:
		return lockdriver.InvalidArgument(op, "context is nil")
	case b == nil:
		return lockdriver.InvalidArgument(op, "backend is nil")
	case key == "":
		return lockdriver.InvalidArgument(op, "key is empty")
	}
	if _, err := lockdriver.NormalizeKey(key); err != nil {
		return err
	}
	return nil
}

// validateLead checks Lead's arguments before any I/O and returns the
// settings of opts.
func validateLead(ctx context.Context, b lock.Backend, key, identity string, fn func(context.Context, lock.Lease) error, opts []lock.Option) (lock.Settings, error) {
	const op = "lead"
	if err := validate(op, ctx, b, key); err != nil {
		return lock.Settings{}, err
	}
	switch {
	case identity == "":
		return lock.Settings{}, lockdriver.InvalidArgument(op, "identity is empty")
	case len(identity) > MaxIdentityBytes || !utf8.ValidString(identity):
		return lock.Settings{}, lockdriver.InvalidArgument(op, "identity must be valid UTF-8 of at most 256 bytes")
	case fn == nil:
		return lock.Settings{}, lockdriver.InvalidArgument(op, "fn is nil")
	}
	s, err := lock.Resolve(nil, opts...)
	if err != nil {
		return s, err
	}
	interval := s.Heartbeat.Interval
	if interval == 0 {
		interval = s.TTL / 3
	}
	switch {
	case s.Limit > 0:
		return s, lockdriver.InvalidArgument(op, "lock.WithLimit does not apply to an election: a term has one leader")
	case s.TTL < MinTTL:
		return s, lockdriver.InvalidArgument(op, "ttl must be at least 1s (election.MinTTL): a shorter term cannot be kept alive")
	case interval < 0 || interval > s.TTL/2:
		return s, lockdriver.InvalidArgument(op, "heartbeat interval must be at most half the ttl, so that one failed extension does not lose the term")
	}
	return s, nil
}
