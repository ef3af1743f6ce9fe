// Package operator is how package admin reaches what a
// redisbackend.Backend keeps unexported: redisbackend sets the variables
// below in its init (admin imports redisbackend, so that has run when admin
// calls them). Nothing else uses it.
package operator

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
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

var (
	// View returns the operator's view of b, a *redisbackend.Backend.
	View func(b any) Backend
	// CheckCtx and MapError are redisbackend's validation of a context and
	// its mapping of client errors to *lock.Error values, for op.
	CheckCtx func(op string, ctx context.Context) error
	MapError func(ctx context.Context, op string, err error) error
	// ValidStripes is redisbackend's check of a FenceStripes value.
	ValidStripes func(n int) error
)
