package redisbackend_test

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// TestRingRejected: a *redis.Ring moves a key to another shard when it
// marks one down, so two clients could hold one key on two shards and the
// key's fences would restart there. New refuses it in every layout, before
// any I/O, and says why.
func TestRingRejected(t *testing.T) {
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1", "b": "127.0.0.1:2"}})
	t.Cleanup(func() { _ = ring.Close() })
	type wrapped struct{ *redis.Ring } // a user's wrapper is still a Ring
	for _, client := range []redis.UniversalClient{ring, wrapped{ring}} {
		for _, layout := range []redisbackend.Layout{redisbackend.LayoutAuto, redisbackend.LayoutSingle, redisbackend.LayoutCluster} {
			b, err := redisbackend.New(client, &redisbackend.Options{Layout: layout})
			if b != nil || lock.CodeOf(err) != lock.CodeInvalidArgument {
				t.Fatalf("New(%T, %v) = %v, %v; want nil, InvalidArgument", client, layout, b, err)
			}
			if !strings.Contains(err.Error(), "Ring") || !strings.Contains(err.Error(), "shard") {
				t.Errorf("New(%T, %v): error %q does not say why", client, layout, err)
			}
		}
	}
}

// TestWrappedClusterClient: a wrapper embedding a *redis.ClusterClient gets
// the cluster layout from LayoutAuto, as the client itself does (the single
// layout's scripts would fail with CROSSSLOT on a cluster). New does no
// I/O here, so the client points nowhere.
func TestWrappedClusterClient(t *testing.T) {
	cluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() { _ = cluster.Close() })
	type wrapped struct{ *redis.ClusterClient }
	b, err := redisbackend.New(wrapped{cluster}, &redisbackend.Options{DisableConfigRecord: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if got := b.Layout(); got != redisbackend.LayoutCluster {
		t.Errorf("Layout() = %v, want %v", got, redisbackend.LayoutCluster)
	}
}
