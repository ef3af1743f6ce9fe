package main

// The spec-minimal row: syncguard's wire format (seed 000, the Redis backend
// specification) done with the least the specification requires, by the
// bench's own scripts (internal/specmin) run with EVALSHA from go-redis. It is the floor of the format that issue 25's
// goal compares syncguard-go's Redis command time against (at most 0.8x
// this row's).

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/syncguard-go/syncguard/bench/internal/specmin"
)

var (
	specAcquire = redis.NewScript(specmin.Acquire)
	specRelease = redis.NewScript(specmin.Release)
)

// specPrefix is the spec-minimal row's key prefix (the spec's default is
// "syncguard"; a prefix of its own keeps the row's keys apart).
const specPrefix = "spec"

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
	return &impl{cycle: specmin.Cycle(specPrefix, ttl,
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
		cycle: specmin.Cycle(specPrefix, ttl,
			func(ctx context.Context, keys []string, id, ttlMs, key string) (any, error) {
				return acq.Exec(ctx, c, keys, []string{id, ttlMs, key}).ToAny()
			},
			func(ctx context.Context, keys []string, id string) (int64, error) {
				return rel.Exec(ctx, c, keys, []string{id}).AsInt64()
			}),
	}, nil
}
