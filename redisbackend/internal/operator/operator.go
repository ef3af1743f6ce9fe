// Package operator is admin's view of a redisbackend.Backend.
package operator

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

// Keys are the Redis keys of one lock key.
type Keys struct{ Lock, Fence, Done, Record string }

// Backend is the operator's view of one *redisbackend.Backend.
type Backend interface {
	// Client returns the Backend's client.
	Client() redis.UniversalClient
	// ReplicaAckN is Options.ReplicaAck.N.
	ReplicaAckN() int
	// StorageKeys names the keys of key.
	StorageKeys(key string) (Keys, error)
	// ForceRelease, ForceReleaseSlots and ForceReleaseRW release key's
	// live leases.
	ForceRelease(ctx context.Context, key string) (lock.Info, error)
	ForceReleaseSlots(ctx context.Context, key string, fence lock.Fence) ([]lock.Info, error)
	ForceReleaseRW(ctx context.Context, key string, fences []lock.Fence) (*rwlock.Info, error)
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
