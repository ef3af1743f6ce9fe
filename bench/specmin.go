package main

// The spec-minimal row: syncguard's wire format (seed 000, the Redis backend
// specification) done with the least the specification requires, by the
// bench's own scripts (internal/specmin) run with EVALSHA from go-redis. It is the floor of the format that issue 25's
// goal compares syncguard-go's Redis command time against (at most 0.8x
// this row's).

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/syncguard-go/syncguard/bench/internal/specmin"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

var (
	specAcquire = redis.NewScript(specmin.Acquire)
	specRelease = redis.NewScript(specmin.Release)
)

// specPrefix is the spec-minimal row's key prefix (the spec's default is
// "syncguard"; a prefix of its own keeps the row's keys apart).
const specPrefix = "spec"

// specMaxFence is FENCE_THRESHOLDS.MAX: the backend must refuse a fence
// above it (ADR-004), a check on the client, not in Lua.
const specMaxFence = 900_000_000_000_000

// newSpecMinimal is the spec-minimal row: Acquire = one EVALSHA of
// specmin.Acquire with the three keys of the dual-key pattern and the
// fence counter; Release = one EVALSHA of specmin.Release with the
// index key. go-redis's Script.Run sends EVALSHA and falls back to EVAL on
// NOSCRIPT; both scripts are loaded here first. Distinct keys only (no
// retry, no keep-alive).
func newSpecMinimal(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	ctx := context.Background()
	for _, s := range []*redis.Script{specAcquire, specRelease} {
		if err := s.Load(ctx, rdb).Err(); err != nil {
			return nil, err
		}
	}
	return &impl{cycle: specCycle(ttl,
		func(ctx context.Context, keys []string, id, ttlMs, key string) (any, error) {
			return specAcquire.Run(ctx, rdb, keys, id, ttlMs, key).Result()
		},
		func(ctx context.Context, keys []string, id string) (int64, error) {
			return specRelease.Run(ctx, rdb, keys, id).Int64()
		})}, nil
}

// newSpecMinimalRueidis is the spec-minimal row's cycle on a rueidis
// client of its own (its default options) instead of go-redis
// (libSpecMinRueidis): what the format's floor does on a client that
// pipelines every call on one connection, as rueidislock's does. rueidis's
// Lua.Exec sends EVALSHA and falls back to EVAL on NOSCRIPT.
func newSpecMinimalRueidis(rdb *redis.Client, ttl time.Duration) (*impl, error) {
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{rdb.Options().Addr}})
	if err != nil {
		return nil, err
	}
	acq, rel := rueidis.NewLuaScript(specmin.Acquire), rueidis.NewLuaScript(specmin.Release)
	return &impl{
		close: func() error { c.Close(); return nil },
		cycle: specCycle(ttl,
			func(ctx context.Context, keys []string, id, ttlMs, key string) (any, error) {
				return acq.Exec(ctx, c, keys, []string{id, ttlMs, key}).ToAny()
			},
			func(ctx context.Context, keys []string, id string) (int64, error) {
				return rel.Exec(ctx, c, keys, []string{id}).AsInt64()
			}),
	}, nil
}

// specCycle is the spec-minimal cycle on a key nobody else uses, with
// acquire and release sending the scripts.
func specCycle(ttl time.Duration,
	acquire func(ctx context.Context, keys []string, id, ttlMs, key string) (any, error),
	release func(ctx context.Context, keys []string, id string) (int64, error),
) func(ctx context.Context, key string) error {
	ttlMs := strconv.FormatInt(ttl.Milliseconds(), 10)
	return func(ctx context.Context, key string) error {
		id := lockdriver.NewLockID()
		lockKey := specPrefix + ":" + key
		idKey := specPrefix + ":id:" + id
		fenceKey := specPrefix + ":fence:" + lockKey
		res, err := acquire(ctx, []string{lockKey, idKey, fenceKey}, id, ttlMs, key)
		if err != nil {
			return err
		}
		if err := specGranted(res); err != nil {
			return err
		}
		n, err := release(ctx, []string{idKey}, id)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%w: spec-minimal release returned %d", errNotObtained, n)
		}
		return nil
	}
}

// specGranted checks an acquire reply: {1, fence, expiresAtMs} with a fence
// of 15 digits no greater than specMaxFence.
func specGranted(res any) error {
	a, ok := res.([]any)
	if !ok || len(a) != 3 || a[0] != int64(1) {
		return fmt.Errorf("%w: spec-minimal acquire returned %v", errNotObtained, res)
	}
	fs, _ := a[1].(string)
	f, err := strconv.ParseInt(fs, 10, 64)
	if err != nil || len(fs) != 15 || f > specMaxFence {
		return fmt.Errorf("spec-minimal acquire: bad fence %q", fs)
	}
	if _, ok := a[2].(int64); !ok {
		return fmt.Errorf("spec-minimal acquire: bad expiresAtMs %v", a[2])
	}
	return nil
}
