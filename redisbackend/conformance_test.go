package redisbackend_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/locktest"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// conformanceBackends returns a locktest factory of backends on client,
// each under a prefix of its own.
func conformanceBackends(client redis.UniversalClient) func(t *testing.T) lock.Backend {
	return func(t *testing.T) lock.Backend {
		b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t)})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return b
	}
}

func TestConformanceRedis(t *testing.T) {
	t.Parallel()
	client := redistest.Shared(t).Client(t)
	locktest.Run(t, conformanceBackends(client))
}

// hidden is a user's wrapper that embeds the redis.UniversalClient
// interface, hiding the concrete client and its Options method: New
// judges it by what it can see (LayoutSingle from LayoutAuto, the default
// resend window, only calls without a deadline sent from their callers'
// goroutines), and every operation still works.
type hidden struct{ redis.UniversalClient }

func TestConformanceHiddenClient(t *testing.T) {
	t.Parallel()
	locktest.Run(t, conformanceBackends(hidden{redistest.Shared(t).Client(t)}))
}

// TestConformanceMiniredis runs the suite on miniredis, which never
// expires keys by itself: the suite's expiry waits fast-forward it. Its
// TIME follows the wall clock, which the scripts' liveness check uses.
func TestConformanceMiniredis(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	locktest.Run(t, conformanceBackends(client),
		locktest.WithExpiry(func(_ *testing.T, d time.Duration) { mr.FastForward(d) }))
	t.Run("multi", func(t *testing.T) { locktest.RunMulti(t, conformanceBackends(client)) })
}

// TestValidationBeforeIO proves that every bad input of the conformance
// suites (locks, limits and read-write locks) is rejected before the backend talks to
// Redis: no dial and no command, counted by a client hook. The backend's own reserved-key rule
// ("id:" and "fence:" keys) is checked the same way.
func TestValidationBeforeIO(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	counter := &redistest.Counter{}
	client.AddHook(counter)
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	key := "valid-key"

	inputs := append(locktest.BadInputs(key), locktest.BadLimitInputs(key)...)
	inputs = append(inputs, locktest.BadReadWriteInputs(key, lockdriver.NewLockID())...)
	inputs = append(inputs, locktest.BadMultiInputs(key)...)
	for _, reserved := range []string{"id:" + lockdriver.NewLockID(), "fence:" + key, "id:", "fence:"} {
		inputs = append(inputs,
			locktest.BadInput{Name: "Acquire/reserved key " + reserved, Call: func(b lock.Backend) error {
				_, err := b.Acquire(context.Background(), reserved, time.Second)
				return err
			}},
			locktest.BadInput{Name: "IsLocked/reserved key " + reserved, Call: func(b lock.Backend) error {
				_, err := b.IsLocked(context.Background(), reserved)
				return err
			}},
			locktest.BadInput{Name: "LookupKey/reserved key " + reserved, Call: func(b lock.Backend) error {
				_, err := b.LookupKey(context.Background(), reserved)
				return err
			}})
	}
	for _, in := range inputs {
		dials, cmds := counter.Dials.Load(), counter.Commands.Load()
		err := in.Call(b)
		if got := lock.CodeOf(err); got != lock.CodeInvalidArgument {
			t.Errorf("%s: %v has code %q, want %q", in.Name, err, got, lock.CodeInvalidArgument)
		}
		if d, c := counter.Dials.Load()-dials, counter.Commands.Load()-cmds; d != 0 || c != 0 {
			t.Errorf("%s: %d dials and %d commands before failing, want none", in.Name, d, c)
		}
	}

	// The counter does see the backend's traffic: a valid call is counted.
	cmds := counter.Commands.Load()
	if locked, err := b.IsLocked(context.Background(), key); err != nil || locked {
		t.Fatalf("IsLocked(valid key) = %v, %v; want false, nil", locked, err)
	}
	if counter.Commands.Load() == cmds {
		t.Fatalf("a valid IsLocked sent no command the hook counted; the check above proves nothing")
	}
}

// The limit suite (locktest.RunLimit) on every layout: a single server,
// a cluster, striped fence counters (both layouts) and miniredis.

func TestLimitConformanceRedis(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	locktest.RunLimit(t, conformanceBackends(client))
}

func TestLimitConformanceCluster(t *testing.T) {
	t.Parallel()
	client := redistest.SharedCluster(t).Client(t)
	locktest.RunLimit(t, conformanceBackends(client))
}

func TestLimitConformanceStriped(t *testing.T) {
	client := redistest.Shared(t).Client(t)
	for _, layout := range []redisbackend.Layout{redisbackend.LayoutSingle, redisbackend.LayoutCluster} {
		t.Run(layout.String(), func(t *testing.T) {
			locktest.RunLimit(t, func(t *testing.T) lock.Backend {
				return stripedBackend(t, client, redistest.Prefix(t), 64, layout)
			}, locktest.WithSharedFences())
		})
	}
}

// TestLimitConformanceMiniredis runs the limit suite on miniredis. Its
// expiry wait fast-forwards the keys' TTLs and also sleeps: a slot lapses
// by the TIME the scripts read, which on miniredis is the wall clock.
func TestLimitConformanceMiniredis(t *testing.T) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	locktest.RunLimit(t, conformanceBackends(client),
		locktest.WithExpiry(func(_ *testing.T, d time.Duration) {
			mr.FastForward(d)
			time.Sleep(d)
		}))
}

// The read-write lock suite (locktest.RunReadWrite) on a single server, a
// cluster, striped fence counters and miniredis; sentinel_test.go runs it
// through a failover client.

func TestReadWriteConformanceRedis(t *testing.T) {
	t.Parallel()
	locktest.RunReadWrite(t, conformanceBackends(redistest.Shared(t).Client(t)))
}

func TestReadWriteConformanceCluster(t *testing.T) {
	t.Parallel()
	locktest.RunReadWrite(t, conformanceBackends(redistest.SharedCluster(t).Client(t)))
}

func TestReadWriteConformanceStriped(t *testing.T) {
	t.Parallel()
	client := redistest.Shared(t).Client(t)
	locktest.RunReadWrite(t, func(t *testing.T) lock.Backend {
		return stripedBackend(t, client, redistest.Prefix(t), 64, redisbackend.LayoutSingle)
	}, locktest.WithSharedFences())
}

func TestReadWriteConformanceMiniredis(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = client.Close() })
	locktest.RunReadWrite(t, conformanceBackends(client),
		locktest.WithExpiry(func(_ *testing.T, d time.Duration) {
			mr.FastForward(d)
			time.Sleep(d)
		}))
}

func TestConformanceMultiRedis(t *testing.T) {
	t.Parallel()
	locktest.RunMulti(t, conformanceBackends(redistest.Shared(t).Client(t)))
}
