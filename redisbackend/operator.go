package redisbackend

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend/internal/operator"
)

// Operator returns b as package admin sees it, for the operator's
// functions (Check, ForceRelease, StorageKeys and the like). Only the
// packages of this module can use its result, an internal type.
func (b *Backend) Operator() operator.Backend { return operatorView{b} }

// operatorView is a Backend as package admin sees it.
type operatorView struct{ b *Backend }

func (v operatorView) Client() redis.UniversalClient { return v.b.client }
func (v operatorView) ReplicaAckN() int              { return v.b.ack.N }
func (v operatorView) StorageKeys(key string) (operator.Keys, error) {
	return v.b.storageKeys(key)
}
func (v operatorView) ForceRelease(ctx context.Context, key string) (lock.Info, error) {
	return v.b.forceRelease(ctx, key)
}
func (v operatorView) ForceReleaseSlots(ctx context.Context, key string, fence lock.Fence) ([]lock.Info, error) {
	return v.b.forceReleaseSlots(ctx, key, fence)
}
func (v operatorView) ForceReleaseRW(ctx context.Context, key string, fences []lock.Fence) (*rwlock.Info, error) {
	return v.b.forceReleaseRW(ctx, key, fences)
}
