// Package operator is what package admin reaches of a
// redisbackend.Backend beyond its lock methods: the Backend's Operator
// method returns this view of it. It also holds the check of a
// FenceStripes value that both packages make.
package operator

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Keys are the Redis keys of one lock key (admin.StorageKeys).
type Keys struct{ Lock, Fence, Done, Record string }

// Backend is the operator's view of one *redisbackend.Backend.
type Backend interface {
	// Client is the client the Backend was made with.
	Client() redis.UniversalClient
	// ReplicaAckN is Options.ReplicaAck.N.
	ReplicaAckN() int
	// StorageKeys names the keys of key in the Backend's layout.
	StorageKeys(key string) (Keys, error)
	// ForceRelease and ForceReleaseSlots release the live lease(s) of key
	// without their lock ids.
	ForceRelease(ctx context.Context, key string) (lock.Info, error)
	ForceReleaseSlots(ctx context.Context, key string, fence lock.Fence) ([]lock.Info, error)
}

// MaxFenceStripes is redisbackend.MaxFenceStripes.
const MaxFenceStripes = 1 << 16

// ValidStripes checks a FenceStripes value.
func ValidStripes(n int) error {
	if n < 0 || n > MaxFenceStripes {
		return lockdriver.InvalidArgument("config", "FenceStripes must be between 0 (one counter per key) and "+strconv.Itoa(MaxFenceStripes))
	}
	return nil
}
