// Readwrite is a tour of lock/rwlock in two parts, on one key:
//
//  1. Readers share, a writer waits alone: two readers hold
//     "settings:tenant-7" together; a writer queues behind them and keeps a
//     third reader out; when the readers release, the writer gets the key
//     with a fence above both readers'.
//  2. The stale reader: a reader whose lease expires while it is paused
//     computes a value from what it read; a writer changed the settings
//     meanwhile, and the fenced cache refuses the stale value.
//
// It runs on an embedded Redis, or on REDIS_URL under a random prefix,
// and exits non-zero when the library misbehaves.
//
//	make demo        # or: go run ./examples/readwrite
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

const key = "settings:tenant-7"

func main() { demorun.Main("readwrite", demo) }

// demo runs both parts on env's Redis.
func demo(ctx context.Context, env *demorun.Env) error {
	b, err := env.Backend("readwrite")
	if err != nil {
		return err
	}
	c := &cache{}
	if err := sharing(ctx, env, b, c); err != nil {
		return fmt.Errorf("part 1: %w", err)
	}
	if err := staleReader(ctx, env, b, c); err != nil {
		return fmt.Errorf("part 2: %w", err)
	}
	fmt.Fprintf(env.Out, "\nOK: %s = %q (fence %s)\n", key, c.value, c.fence)
	return nil
}

// sharing is part 1.
func sharing(ctx context.Context, env *demorun.Env, b lock.Backend, c *cache) error {
	w := env.Out
	fmt.Fprintf(w, "\n== Part 1: readers share, a writer waits alone ==\n")
	var readers []lock.Lease
	var releases []func() error
	for i := 1; i <= 2; i++ {
		_, l, release, err := rwlock.HoldRead(ctx, b, key)
		if err != nil {
			return fmt.Errorf("reader-%d: %w", i, err)
		}
		fmt.Fprintf(w, "reader-%d holds %s with fence %s\n", i, key, l.Fence)
		readers, releases = append(readers, l), append(releases, release)
	}
	written := make(chan error, 1)
	go func() {
		written <- rwlock.Write(ctx, b, key, func(ctx context.Context, l lock.Lease) error {
			fmt.Fprintf(w, "writer holds %s alone with fence %s, above both readers'\n", key, l.Fence)
			return c.put("v2", l.Fence)
		}, lock.WithWait(10*time.Second))
	}()
	if err := untilQueued(ctx, env, b); err != nil {
		return err
	}
	fmt.Fprintln(w, "writer queued behind the readers")
	err := rwlock.Read(ctx, b, key, func(context.Context, lock.Lease) error { return nil }, lock.WithWait(0))
	if !errors.Is(err, lock.ErrLocked) {
		return fmt.Errorf("reader-3 beside a waiting writer: got %v, want lock.ErrLocked", err)
	}
	fmt.Fprintln(w, "reader-3 refused: a writer waits (lock.ErrLocked), so readers cannot starve it")
	fmt.Fprintln(w, "readers 1 and 2 release")
	for i, release := range releases {
		if err := release(); err != nil {
			return fmt.Errorf("reader-%d's release: %w", i+1, err)
		}
	}
	return <-written
}

// untilQueued waits until a waiter is in the key's queue (its Redis key
// in redisbackend's layout: docs/redis-keys.md).
func untilQueued(ctx context.Context, env *demorun.Env, b lock.Backend) error {
	p := b.(interface{ Prefix() string }).Prefix()
	queue := p + ":queue:" + p + ":" + key
	for env.Redis.Exists(ctx, queue).Val() == 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// staleReader is part 2.
func staleReader(ctx context.Context, env *demorun.Env, b lock.Backend, c *cache) error {
	const ttl = 500 * time.Millisecond
	w := env.Out
	fmt.Fprintf(w, "\n== Part 2: the stale reader ==\n")
	rw := b.(rwlock.Backend)
	id, err := rw.NewLockID(key)
	if err != nil {
		return err
	}
	// AcquireRW, unlike rwlock.Read, starts no heartbeat: the lease ends.
	a, err := rw.AcquireRW(ctx, key, id, rwlock.ModeRead, ttl)
	if err != nil {
		return fmt.Errorf("reader-A: %w", err)
	}
	fmt.Fprintf(w, "reader-A reads %q with fence %s, then pauses; its lease expires\n", c.value, a.Fence)
	env.Expire(ctx, ttl)
	err = rwlock.Write(ctx, b, key, func(ctx context.Context, l lock.Lease) error {
		fmt.Fprintf(w, "writer-B writes v3 with fence %s\n", l.Fence)
		return c.put("v3", l.Fence)
	})
	if err != nil {
		return fmt.Errorf("writer-B: %w", err)
	}
	err = c.put("computed from "+c.value, a.Fence)
	if !errors.Is(err, errStale) {
		return fmt.Errorf("reader-A's stale value with fence %s was not refused (err = %v)", a.Fence, err)
	}
	fmt.Fprintf(w, "reader-A wakes up, caches its value with fence %s -> REFUSED (%v)\n", a.Fence, err)
	return nil
}

// errStale is cache.put's error for a fence not above the cache's.
var errStale = errors.New("stale fence")

// cache keeps one value and the highest fence it has seen, from writers
// and readers alike: a value computed under an older fence is refused.
type cache struct {
	mu    sync.Mutex
	value string
	fence lock.Fence
}

// put stores v computed under fence f unless the cache saw a later fence.
func (c *cache) put(v string, f lock.Fence) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.Compare(c.fence) <= 0 {
		return fmt.Errorf("%w: %s is not above %s", errStale, f, c.fence)
	}
	c.value, c.fence = v, f
	return nil
}
