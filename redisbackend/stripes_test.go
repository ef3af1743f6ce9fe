package redisbackend_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/locktest"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

func stripedBackend(t testing.TB, client redis.UniversalClient, prefix string, n int, layout redisbackend.Layout) *redisbackend.Backend {
	t.Helper()
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: prefix, FenceStripes: n, Layout: layout})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConformanceStriped(t *testing.T) {
	t.Parallel()
	client := redistest.Shared(t).Client(t)
	for _, layout := range []redisbackend.Layout{redisbackend.LayoutSingle, redisbackend.LayoutCluster} {
		t.Run(layout.String(), func(t *testing.T) {
			locktest.Run(t, func(t *testing.T) lock.Backend {
				return stripedBackend(t, client, redistest.Prefix(t), 64, layout)
			}, locktest.WithSharedFences())
		})
	}
}

// countKeys counts the keys matching pattern with SCAN.
func countKeys(t testing.TB, rdb *redis.Client, pattern string) int {
	t.Helper()
	n := 0
	iter := rdb.Scan(context.Background(), 0, pattern, 1000).Iterator()
	for iter.Next(context.Background()) {
		n++
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFenceStripesBounded: 1,000 distinct keys, each acquired and
// released twice (all keys, then all keys again), with 64 stripes: Redis
// holds at most 64 fence counters afterwards, and every key's second fence
// is above its first.
func TestFenceStripesBounded(t *testing.T) {
	t.Parallel() // its own redis-server; mostly waiting on it
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	for _, layout := range []redisbackend.Layout{redisbackend.LayoutSingle, redisbackend.LayoutCluster} {
		t.Run(layout.String(), func(t *testing.T) {
			t.Parallel()
			prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
			b := stripedBackend(t, rdb, prefix, 64, layout)
			ctx := context.Background()
			// Many times the stripes: a counter per key would leave 1,000.
			const keys = 1_000
			first := make([]lock.Fence, keys)
			for pass := 0; pass < 2; pass++ {
				for i := 0; i < keys; i++ {
					l, err := b.Acquire(ctx, "k"+strconv.Itoa(i), time.Minute)
					if err != nil {
						t.Fatal(err)
					}
					if pass == 1 && l.Fence <= first[i] {
						t.Fatalf("k%d: fence %s after %s, want strictly increasing", i, l.Fence, first[i])
					}
					first[i] = l.Fence
					if err := b.Release(ctx, l.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
			if n := countKeys(t, rdb, prefix+":*fence:*"); n == 0 || n > 64 {
				t.Errorf("%d fence counters after %d keys, want 1..64", n, keys)
			}
		})
	}
}

// TestFenceStripesShared: keys on one stripe (N = 1) granted in turns get
// strictly increasing fences each, and from the one counter overall; a
// counter lost (deleted, as a restart without persistence would) does not
// make them go back, since the stripe restarts from the server's clock.
func TestFenceStripesShared(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	b := stripedBackend(t, rdb, prefix, 1, redisbackend.LayoutSingle)
	ctx := context.Background()
	last := map[string]lock.Fence{}
	var prev lock.Fence
	for i := 0; i < 200; i++ {
		key := []string{"a", "b"}[i%2]
		if i == 100 {
			// The stripe may have run ahead of the clock (more than one
			// grant per ms so far); once the clock has caught up, a lost
			// counter restarts from it.
			time.Sleep(150 * time.Millisecond)
			if err := rdb.Del(ctx, prefix+":fence::0").Err(); err != nil {
				t.Fatal(err)
			}
		}
		l, err := b.Acquire(ctx, key, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if l.Fence <= last[key] || l.Fence <= prev {
			t.Fatalf("grant %d on %s: fence %s after %s (key) and %s (stripe), want strictly increasing", i, key, l.Fence, last[key], prev)
		}
		last[key], prev = l.Fence, l.Fence
		if err := b.Release(ctx, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	if n := countKeys(t, rdb, prefix+":*fence*"); n != 1 {
		t.Errorf("%d fence keys, want the one stripe counter", n)
	}
}

// TestFenceStripesSurviveRestart: on an AOF server with appendfsync
// always, striped fences keep increasing per key across a restart, on both
// layouts.
func TestFenceStripesSurviveRestart(t *testing.T) {
	srv := redistest.Start(t, redistest.WithAOF())
	rdb := srv.Client(t)
	ctx := context.Background()
	for _, layout := range []redisbackend.Layout{redisbackend.LayoutSingle, redisbackend.LayoutCluster} {
		b := stripedBackend(t, rdb, "restart-"+layout.String(), 4, layout)
		before := map[string]lock.Fence{}
		for i := 0; i < 20; i++ {
			key := "k" + strconv.Itoa(i)
			l, err := b.Acquire(ctx, key, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			before[key] = l.Fence
			if err := b.Release(ctx, l.ID); err != nil {
				t.Fatal(err)
			}
		}
		srv.Restart(t)
		for key, f := range before {
			l, err := b.Acquire(ctx, key, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if l.Fence <= f {
				t.Errorf("%s %s: fence %s after the restart, %s before; want strictly increasing", layout, key, l.Fence, f)
			}
		}
	}
}

func TestFenceStripesBadN(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { _ = rdb.Close() })
	for _, n := range []int{-1, redisbackend.MaxFenceStripes + 1} {
		if _, err := redisbackend.New(rdb, &redisbackend.Options{FenceStripes: n}); lock.CodeOf(err) != lock.CodeInvalidArgument {
			t.Errorf("New(FenceStripes %d) = %v, want InvalidArgument", n, err)
		}
	}
	if _, err := redisbackend.New(rdb, &redisbackend.Options{FenceStripes: redisbackend.MaxFenceStripes}); err != nil {
		t.Errorf("New(FenceStripes max) = %v", err)
	}
}
