package redisbackend_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/redistest"
	"github.com/syncguard-go/syncguard/lock/locktest"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// newRing returns a Ring over two private servers, and the servers.
func newRing(t *testing.T) (*redis.Ring, [2]*redistest.Server) {
	t.Helper()
	srvs := [2]*redistest.Server{redistest.Start(t), redistest.Start(t)}
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": srvs[0].Addr(), "b": srvs[1].Addr()}})
	t.Cleanup(func() { _ = ring.Close() })
	return ring, srvs
}

func TestConformanceRing(t *testing.T) {
	ring, _ := newRing(t)
	locktest.Run(t, conformanceBackends(ring))
}

// TestRingSpreadAndByID: on a Ring of two shards, the keys of each lock
// stay on one shard (the cluster layout's hash tag), the locks spread over
// both, and a Backend that never saw the keys releases every lease by id.
// (In the single layout the index key of a lock hashes to another shard
// than its lock key for about half the locks, and such a Release misses.)
func TestRingSpreadAndByID(t *testing.T) {
	ring, srvs := newRing(t)
	ctx := context.Background()
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	b, err := redisbackend.New(ring, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	other, err := redisbackend.New(ring, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	ids := make([]string, n)
	for i := range ids {
		l, err := b.Acquire(ctx, "k"+strconv.Itoa(i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = l.ID
	}
	var perShard [2]int
	for s, srv := range srvs {
		c := srv.Client(t)
		keys, err := c.Keys(ctx, prefix+":*").Result()
		if err != nil {
			t.Fatal(err)
		}
		perShard[s] = len(keys)
		if len(keys)%3 != 0 {
			t.Errorf("shard %d holds %d keys, want 3 per lock (lock, index, fence together)", s, len(keys))
		}
	}
	if perShard[0] == 0 || perShard[1] == 0 || perShard[0]+perShard[1] != 3*n {
		t.Errorf("keys per shard = %v, want all %d spread over both", perShard, 3*n)
	}
	for i, id := range ids {
		if err := other.Release(ctx, id); err != nil {
			t.Fatalf("release k%d by id: %v", i, err)
		}
	}
	for s, srv := range srvs {
		keys := srv.Client(t).Keys(ctx, prefix+":*").Val()
		for _, k := range keys {
			if !strings.Contains(k, ":fence:") {
				t.Errorf("shard %d still holds %q after every release", s, k)
			}
		}
	}
}
