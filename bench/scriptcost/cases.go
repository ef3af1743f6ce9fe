package main

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/bench/internal/specmin"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

var (
	//go:embed seed_acquire.lua
	seedAcquire string
	//go:embed seed_release.lua
	seedRelease string
)

// costCase is one way of running lock cycles: acquire(i) on the i-th key,
// then release(i, what acquire returned).
type costCase struct {
	name    string
	setup   func(rdb *redis.Client) error
	acquire func(i int) (string, error)
	release func(i int, id string) error
}

// allCases are the cases of a run, in the order they are reported.
func allCases() []costCase {
	return []costCase{
		backendCase("syncguard", 0, ""),
		backendCase("slot", 4, ""),
		rwCase("read", rwlock.ModeRead),
		rwCase("write", rwlock.ModeWrite),
		backendCase("term", 0, "node-1"),
		markCase("replay-4rt", true, false),
		markCase("replay-2rt", true, true),
		markCase("dedup-3rt", false, false),
		markCase("dedup-2rt", false, true),
		hitCase("hit-record", false),
		hitCase("hit-acquire", true),
		scriptCase("specmin", specmin.Acquire, specmin.Release, false),
		scriptCase("seed", seedAcquire, seedRelease, true),
	}
}

// backendCase runs cycles through a redisbackend.Backend with default
// options (but a prefix of the case's name): of a lock, or of a slot of a
// limit of size limit (a key of its own, so uncontended) when limit > 0.
// With an identity, each lock is an election's term: its acquire is
// followed by the proclaim that lock/election's Lead makes at a term's
// start (no watcher subscribed).
func backendCase(name string, limit int, identity string) costCase {
	var bk *redisbackend.Backend
	ctx := context.Background()
	return costCase{
		name: name,
		setup: func(rdb *redis.Client) (err error) {
			bk, err = redisbackend.New(rdb, &redisbackend.Options{Prefix: name})
			return err
		},
		acquire: func(i int) (string, error) {
			key := "k" + strconv.Itoa(i)
			if limit == 0 {
				l, err := bk.Acquire(ctx, key, 30*time.Second)
				if err == nil && identity != "" {
					err = bk.Proclaim(ctx, l, identity)
				}
				return l.ID, err
			}
			id, err := bk.NewLockID(key)
			if err != nil {
				return "", err
			}
			l, err := bk.AcquireSlot(ctx, key, id, limit, 30*time.Second)
			return l.ID, err
		},
		release: func(_ int, id string) error { return bk.Release(ctx, id) },
	}
}

// rwCase runs cycles of a read-write lock held in mode through a
// redisbackend.Backend with default options: a key of its own each,
// uncontended, as the lock's cycle.
func rwCase(name string, mode rwlock.Mode) costCase {
	var bk *redisbackend.Backend
	ctx := context.Background()
	return costCase{
		name: name,
		setup: func(rdb *redis.Client) (err error) {
			bk, err = redisbackend.New(rdb, &redisbackend.Options{Prefix: name})
			return err
		},
		acquire: func(i int) (string, error) {
			key := "k" + strconv.Itoa(i)
			id, err := bk.NewLockID(key)
			if err != nil {
				return "", err
			}
			l, err := bk.AcquireRW(ctx, key, id, mode, 30*time.Second)
			return l.ID, err
		},
		release: func(_ int, id string) error { return bk.Release(ctx, id) },
	}
}

// markCase runs the cycles of a replayed request's first run (record
// true) or of a task with a done window through a redisbackend.Backend:
// with combined, the acquire that answers with the key's mark
// (AcquireRecord, AcquireDone) then the release that stores it
// (ReleaseRecord, ReleaseDone); without, the calls they replace: for a
// record Record, Acquire, Record again under the lease, ReleaseRecord;
// for a done marker Acquire, IsDone, ReleaseDone.
func markCase(name string, record, combined bool) costCase {
	var bk *redisbackend.Backend
	ctx := context.Background()
	leases := map[int]lock.Lease{}
	const ttl = 30 * time.Second
	rec := []byte("a small response record, about the size of a 201 with a JSON body")
	return costCase{
		name: name,
		setup: func(rdb *redis.Client) (err error) {
			bk, err = redisbackend.New(rdb, &redisbackend.Options{Prefix: name})
			return err
		},
		acquire: func(i int) (string, error) {
			key := "k" + strconv.Itoa(i)
			var l lock.Lease
			var err error
			switch {
			case combined && record:
				l, _, err = bk.AcquireRecord(ctx, key, ttl)
			case combined:
				l, _, err = bk.AcquireDone(ctx, key, ttl)
			case record:
				if _, _, err = bk.Record(ctx, key); err == nil {
					if l, err = bk.Acquire(ctx, key, ttl); err == nil {
						_, _, err = bk.Record(ctx, key)
					}
				}
			default:
				if l, err = bk.Acquire(ctx, key, ttl); err == nil {
					_, err = bk.IsDone(ctx, key)
				}
			}
			if err == nil && l.ID == "" {
				err = fmt.Errorf("%s: key %s answered with its mark", name, key)
			}
			leases[i] = l
			return l.ID, err
		},
		release: func(i int, _ string) error {
			l := leases[i]
			delete(leases, i)
			if record {
				return bk.ReleaseRecord(ctx, l, rec, time.Minute)
			}
			return bk.ReleaseDone(ctx, l, time.Minute)
		},
	}
}

// hitCase runs replays of a stored record through a redisbackend.Backend:
// its "acquire" stores a record for a new key with a plain SET (not a
// script command, so not counted) and reads it back, by AcquireRecord
// (combined) or by Record; its "release" does nothing.
func hitCase(name string, combined bool) costCase {
	var bk *redisbackend.Backend
	var rdb *redis.Client
	ctx := context.Background()
	return costCase{
		name: name,
		setup: func(c *redis.Client) (err error) {
			rdb = c
			bk, err = redisbackend.New(rdb, &redisbackend.Options{Prefix: name})
			return err
		},
		acquire: func(i int) (string, error) {
			key := "k" + strconv.Itoa(i)
			if err := rdb.Set(ctx, name+":record:"+name+":"+key, "a small response record", time.Minute).Err(); err != nil {
				return "", err
			}
			var r []byte
			var err error
			if combined {
				_, r, err = bk.AcquireRecord(ctx, key, 30*time.Second)
			} else {
				r, _, err = bk.Record(ctx, key)
			}
			if err == nil && r == nil {
				err = fmt.Errorf("%s: no record for %s", name, key)
			}
			return "", err
		},
		release: func(int, string) error { return nil },
	}
}

// scriptCase runs cycles of a pair of scripts by EVALSHA on keys of the
// prefix name: the spec-minimal scripts' arguments (acquire: KEYS lock,
// index, fence; ARGV lock id, ttl ms, user key; release: KEYS index; ARGV
// lock id), or with seed, seed 000's (the acquire's ARGV lock id, ttl ms,
// tolerance ms, storage key, user key; the release's lock id, tolerance).
func scriptCase(name, acquireSrc, releaseSrc string, seed bool) costCase {
	acq, rel := redis.NewScript(acquireSrc), redis.NewScript(releaseSrc)
	var rdb *redis.Client
	ctx := context.Background()
	return costCase{
		name: name,
		setup: func(c *redis.Client) error {
			rdb = c
			for _, s := range []*redis.Script{acq, rel} {
				if err := s.Load(ctx, rdb).Err(); err != nil {
					return err
				}
			}
			return nil
		},
		acquire: func(i int) (string, error) {
			key := "k" + strconv.Itoa(i)
			lockKey := name + ":" + key
			id := lockdriver.NewLockID()
			args := []any{id, "30000", key}
			if seed {
				args = []any{id, "30000", "1000", lockKey, key}
			}
			res, err := acq.EvalSha(ctx, rdb, []string{lockKey, name + ":id:" + id, name + ":fence:" + lockKey}, args...).Slice()
			if err != nil || len(res) != 3 || res[0] != int64(1) {
				return "", fmt.Errorf("%s acquire = %v, %v", name, res, err)
			}
			return id, nil
		},
		release: func(_ int, id string) error {
			args := []any{id}
			if seed {
				args = append(args, "1000")
			}
			n, err := rel.EvalSha(ctx, rdb, []string{name + ":id:" + id}, args...).Int64()
			if err != nil || n != 1 {
				return fmt.Errorf("%s release = %v, %v", name, n, err)
			}
			return nil
		},
	}
}

// selected is the cases c names (all when it names none).
func selected(c config) []costCase {
	var out []costCase
	for _, cc := range allCases() {
		if len(c.cases) == 0 || slices.Contains(c.cases, cc.name) {
			out = append(out, cc)
		}
	}
	return out
}
