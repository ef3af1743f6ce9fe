// Package benchkit is the set-up the packages' benchmarks share.
package benchkit

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// PoolSize is the connection pool of Client's client.
const PoolSize = 64

// Client starts a private redis-server and returns a client on it.
func Client(b testing.TB) *redis.Client {
	b.Helper()
	return redistest.Start(b).Client(b, func(o *redis.Options) { o.PoolSize = PoolSize })
}

// Backend returns a Backend on rdb with the options o under the prefix
// "bench".
func Backend(b testing.TB, rdb redis.UniversalClient, o redisbackend.Options) *redisbackend.Backend {
	b.Helper()
	o.Prefix = "bench"
	bk, err := redisbackend.New(rdb, &o)
	if err != nil {
		b.Fatal(err)
	}
	return bk
}
