package election

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
)

// LeaderOf returns the leader of key, or ErrNoLeader when nobody leads it.
// Its Identity is empty when b is not a Store, or when the key is held
// other than by Lead.
func LeaderOf(ctx context.Context, b lock.Backend, key string) (Leader, error) {
	if err := validate("leader_of", ctx, b, key); err != nil {
		return Leader{}, err
	}
	l, err := lookup(ctx, b, key)
	if err == nil && l.Fence == "" {
		err = ErrNoLeader
	}
	return l, err
}

// lookup reads the term of key: a zero Leader when nobody leads it.
func lookup(ctx context.Context, b lock.Backend, key string) (Leader, error) {
	var (
		identity string
		info     *lock.Info
		err      error
	)
	if s := storeOf(b); s != nil {
		identity, info, err = s.LookupOwner(ctx, key)
	} else {
		info, err = b.LookupKey(ctx, key)
	}
	if err != nil || info == nil {
		return Leader{}, err
	}
	return Leader{Identity: identity, Fence: info.Fence, ExpiresAt: info.ExpiresAt}, nil
}
