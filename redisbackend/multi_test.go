package redisbackend_test

import (
	"context"
	"testing"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/multilock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestMultiRoundTrips: N keys of one slot take two round trips per cycle
// of multilock.Do, one script call to take them all and one pipeline to
// release them, whatever N, on one Redis and on Redis Cluster.
func TestMultiRoundTrips(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	counter := redistest.Count(client)
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableCoalescing: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx := context.Background()
	// The first cycle loads the scripts (NOSCRIPT, then EVAL or SCRIPT LOAD).
	for _, n := range []int{0, 1, 2, 8, multilock.MaxKeys} {
		keys := make([]string, max(n, 1))
		for i := range keys {
			keys[i] = "{acct}:" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		}
		before := counter.RoundTrips.Load()
		err := multilock.Do(ctx, b, keys, func(ctx context.Context, leases []lock.Lease) error {
			for i, l := range leases {
				if l.Key != keys[i] || l.Fence == "" {
					t.Errorf("lease %d: got key %q fence %q, want key %q and a fence", i, l.Key, l.Fence, keys[i])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Do with %d keys: %v", n, err)
		}
		if got := counter.RoundTrips.Load() - before; got != 2 && n > 0 {
			t.Errorf("%d keys: got %d round trips per cycle, want 2", n, got)
		}
	}
}
