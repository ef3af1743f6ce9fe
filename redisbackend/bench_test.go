package redisbackend_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/redistest"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// BenchmarkCycle measures Acquire+Release cycles on distinct keys with 32
// goroutines (RunParallel with parallelism 16 on 2 CPUs; more on bigger
// machines), and in the same run, on the same private server and client
// settings, the raw baseline a lock without fencing, server time or the
// reverse index would cost: SET key val NX PX + DEL.
func BenchmarkCycle(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b, func(o *redis.Options) { o.PoolSize = 64 })
	ctx := context.Background()
	const ttl = 30 * time.Second
	var seq atomic.Int64
	nextKey := func(prefix string) string {
		return prefix + strconv.FormatInt(seq.Add(1), 10)
	}

	b.Run("syncguard", func(b *testing.B) {
		bk, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			key := nextKey("k")
			for pb.Next() {
				l, err := bk.Acquire(ctx, key, ttl)
				if err != nil {
					b.Error(err)
					return
				}
				if err := bk.Release(ctx, l.ID); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})

	b.Run("raw-setnx-del", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(16)
		b.RunParallel(func(pb *testing.PB) {
			key := nextKey("raw:")
			for pb.Next() {
				ok, err := rdb.SetNX(ctx, key, lock.NewLockID(), ttl).Result()
				if err != nil || !ok {
					b.Errorf("SET NX = %v, %v", ok, err)
					return
				}
				if err := rdb.Del(ctx, key).Err(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkDo measures lock.Do around an empty function (acquire, start
// and stop the heartbeat, release) on distinct keys.
func BenchmarkDo(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b, func(o *redis.Options) { o.PoolSize = 64 })
	bk, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var seq atomic.Int64
	noop := func(context.Context, lock.Lease) error { return nil }
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		key := "do" + strconv.FormatInt(seq.Add(1), 10)
		for pb.Next() {
			if err := lock.Do(ctx, bk, key, noop); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
