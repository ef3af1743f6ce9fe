package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/bench/internal/specmin"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// TestSpecMinimal checks the spec-minimal scripts against seed 000's
// format by reading and writing their keys with syncguard-go on the same
// prefix: the lock JSON and the index are what syncguard-go reads, and
// both share one fence counter per key.
func TestSpecMinimal(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("SYNCGUARD_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server not on PATH")
		}
		t.Skip("redis-server not on PATH")
	}
	srv, err := startServer("redis-server")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: specPrefix})
	if err != nil {
		t.Fatal(err)
	}
	if c := backendCloser(b); c != nil {
		defer c()
	}

	const key = "k"
	lockKey, fenceKey := specPrefix+":"+key, specPrefix+":fence:"+specPrefix+":"+key
	acquire := func(id string) (any, error) {
		return specAcquire.Run(ctx, rdb, []string{lockKey, specPrefix + ":id:" + id, fenceKey}, id, "10000", key).Result()
	}
	release := func(idKeyOf, id string) int64 {
		n, err := specRelease.Run(ctx, rdb, []string{specPrefix + ":id:" + idKeyOf}, id).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	id1, id2 := lockdriver.NewLockID(), lockdriver.NewLockID()
	res, err := acquire(id1)
	if err != nil || specmin.Granted(res) != nil || res.([]any)[1] != "000000000000001" {
		t.Fatalf("first acquire: %v, %v", res, err)
	}
	if res, err := acquire(id2); err != nil || res != int64(0) {
		t.Fatalf("acquire of a held key: %v, %v (want 0)", res, err)
	}
	if _, err := b.Acquire(ctx, key, 10*time.Second); !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("syncguard-go on a key the spec-minimal script holds: %v (want ErrLocked)", err)
	}
	info, err := b.LookupID(ctx, id1)
	if err != nil || info == nil || info.Fence != "000000000000001" {
		t.Fatalf("syncguard-go's LookupID of the spec-minimal lease: %+v, %v", info, err)
	}
	if n := release(id2, id2); n != -1 {
		t.Errorf("release of an id never acquired: %d (want -1)", n)
	}
	if n := release(id1, id2); n != 0 {
		t.Errorf("release through another lease's index: %d (want 0)", n)
	}
	if n := release(id1, id1); n != 1 {
		t.Fatalf("release: %d (want 1)", n)
	}
	if n, _ := rdb.Exists(ctx, lockKey, specPrefix+":id:"+id1).Result(); n != 0 {
		t.Errorf("%d keys left after release", n)
	}
	if v, _ := rdb.Get(ctx, fenceKey).Result(); v != "1" {
		t.Errorf("fence counter %q after release (want 1, never deleted)", v)
	}
	l, err := b.Acquire(ctx, key, 10*time.Second)
	if err != nil || l.Fence != "000000000000002" {
		t.Fatalf("syncguard-go after the spec-minimal release: %+v, %v (want fence 2 from the shared counter)", l, err)
	}
	if res, err := acquire(id2); err != nil || res != int64(0) {
		t.Fatalf("spec-minimal acquire of a key syncguard-go holds: %v, %v (want 0)", res, err)
	}
}
