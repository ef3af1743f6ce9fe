package election

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
)

// LeaderOf returns the leader of key, or ErrNoLeader when nobody leads it.
func LeaderOf(ctx context.Context, b lock.Backend, key string) (Leader, error) {
	if err := validate("leader_of", b, key); err != nil {
		return Leader{}, err
	}
	info, err := b.LookupKey(ctx, key)
	if err != nil {
		return Leader{}, err
	}
	if info == nil {
		return Leader{}, ErrNoLeader
	}
	return Leader{Fence: info.Fence, ExpiresAt: info.ExpiresAt}, nil
}
