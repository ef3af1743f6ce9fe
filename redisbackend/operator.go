package redisbackend

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend/internal/operator"
)

// The operator's functions (Check, ForceRelease, StorageKeys and the like)
// are in package admin; this is what they reach of a Backend.
func init() {
	operator.View = func(b any) operator.Backend { return operatorView{b.(*Backend)} }
	operator.CheckCtx = checkCtx
	operator.MapError = mapError
	operator.ValidStripes = validStripes
}

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
