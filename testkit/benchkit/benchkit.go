// Package benchkit is the set-up the packages' benchmarks share: a private
// redis-server, a client whose pool serves 16 goroutines per CPU, and
// Backends on it under the prefix "bench".
package benchkit

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// PoolSize is the connection pool of Client's client.
const PoolSize = 64

// Client starts a redis-server of the benchmark's own and returns a client
// of PoolSize connections on it.
func Client(b testing.TB) *redis.Client {
	b.Helper()
	return redistest.Start(b).Client(b, func(o *redis.Options) { o.PoolSize = PoolSize })
}

// Backend returns a Backend on rdb with the options o under the prefix
// "bench", whatever o.Prefix says.
func Backend(b testing.TB, rdb redis.UniversalClient, o redisbackend.Options) *redisbackend.Backend {
	b.Helper()
	o.Prefix = "bench"
	bk, err := redisbackend.New(rdb, &o)
	if err != nil {
		b.Fatal(err)
	}
	return bk
}
