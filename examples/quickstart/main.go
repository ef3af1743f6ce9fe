// Quickstart is a tour of syncguard-go in two parts, on one key:
//
//  1. One holder at a time: four workers compete for "invoice:42" through
//     lock.Do, and each writes to a fenced [Register] with its lease's fence.
//  2. The stale holder: a worker whose lease expires while it is paused
//     wakes up and writes anyway; the register rejects the write because
//     its fence is older than that of the worker that took the lock next.
//
// It runs on an embedded Redis, or on REDIS_URL under a random prefix
// (only the fence counter stays there), and exits non-zero when the
// library misbehaves.
//
//	make demo        # or: go run ./examples/quickstart
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"

	"github.com/syncguard-go/syncguard/lock"
)

const (
	key     = "invoice:42"
	workers = 4
)

// opts are the lock.Do options of every worker: a short TTL (lock.Do keeps
// the lease alive while the work runs) and a bound on waiting for the key.
var opts = []lock.Option{lock.WithTTL(2 * time.Second), lock.WithWait(5 * time.Second)}

func main() { demorun.Main("quickstart", demo) }

// demo runs both parts on env's Redis.
func demo(ctx context.Context, env *demorun.Env) error {
	_, err := tour(ctx, env)
	return err
}

// tour runs both parts and returns the register for inspection.
func tour(ctx context.Context, env *demorun.Env) (*Register, error) {
	backend, err := env.Backend("quickstart")
	if err != nil {
		return nil, err
	}
	w := env.Out
	reg := NewRegister()
	if err := oneAtATime(ctx, w, backend, reg); err != nil {
		return reg, fmt.Errorf("part 1: %w", err)
	}
	if err := staleHolder(ctx, w, backend, reg, env.Expire); err != nil {
		return reg, fmt.Errorf("part 2: %w", err)
	}
	accepted, rejected := reg.Stats()
	if accepted != workers+1 || rejected != 1 {
		return reg, fmt.Errorf("register accepted %d writes and rejected %d, want %d and 1", accepted, rejected, workers+1)
	}
	value, fence := reg.Read(key)
	fmt.Fprintf(w, "\nOK: %d writes accepted, %d stale write rejected; %s = %q (fence %s)\n",
		accepted, rejected, key, value, fence)
	return reg, nil
}

// oneAtATime is part 1: workers compete for the key through lock.Do.
func oneAtATime(ctx context.Context, w io.Writer, b lock.Backend, reg *Register) error {
	fmt.Fprintf(w, "\n== Part 1: one holder at a time ==\n"+
		"%d workers race to mark %s paid. lock.Do lets one in and retries the others\n"+
		"with backoff; each holder reads the register and writes with its lease's fence.\n", workers, key)
	var (
		mu   sync.Mutex // guards w and errs
		errs []error
		wg   sync.WaitGroup
	)
	for i := 1; i <= workers; i++ {
		name := fmt.Sprintf("worker-%d", i)
		wg.Go(func() {
			err := lock.Do(ctx, b, key, func(ctx context.Context, l lock.Lease) error {
				prev, _ := reg.Read(key)
				if err := reg.Write(key, l.Fence, "paid by "+name); err != nil {
					return err
				}
				mu.Lock()
				fmt.Fprintf(w, "%s acquired fence %s -> write accepted (previous: %q)\n", name, l.Fence, prev)
				mu.Unlock()
				time.Sleep(20 * time.Millisecond) // so the others must wait
				return nil
			}, opts...)
			if err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// staleHolder is part 2: a holder whose lease expired tries to write.
func staleHolder(ctx context.Context, w io.Writer, b lock.Backend, reg *Register, expire func(context.Context, time.Duration)) error {
	const ttl = 500 * time.Millisecond
	fmt.Fprintf(w, "\n== Part 2: the stale holder ==\n"+
		"worker-A takes the lock for %v and never extends it, then stalls (a long GC pause).\n"+
		"Its lease expires and worker-B takes the lock. A wakes up believing it still holds\n"+
		"the lock and writes: the register refuses it, because A's fence is older than B's.\n", ttl)

	// Acquire, unlike lock.Do, starts no heartbeat: nothing extends A's lease.
	a, err := b.Acquire(ctx, key, ttl)
	if err != nil {
		return fmt.Errorf("worker-A: %w", err)
	}
	fmt.Fprintf(w, "worker-A acquired fence %s, then pauses; its lease expires\n", a.Fence)
	expire(ctx, ttl)

	var fenceB lock.Fence
	err = lock.Do(ctx, b, key, func(ctx context.Context, l lock.Lease) error {
		fenceB = l.Fence
		return reg.Write(key, l.Fence, "paid by worker-B")
	}, opts...)
	if err != nil {
		return fmt.Errorf("worker-B: %w", err)
	}
	fmt.Fprintf(w, "worker-B acquired fence %s -> write accepted\n", fenceB)

	err = reg.Write(key, a.Fence, "paid by worker-A")
	if !errors.Is(err, ErrStaleFence) {
		return fmt.Errorf("worker-A's stale write with fence %s was not rejected (err = %v)", a.Fence, err)
	}
	fmt.Fprintf(w, "worker-A wakes up, writes with fence %s -> stale write REJECTED (fence A %s < fence B %s)\n",
		a.Fence, a.Fence, fenceB)

	err = b.Release(ctx, a.ID)
	if !errors.Is(err, lock.ErrNotHeld) {
		return fmt.Errorf("worker-A's release: got %v, want lock.ErrNotHeld", err)
	}
	fmt.Fprintf(w, "worker-A releases -> lock.ErrNotHeld (%v): its lease ended long ago\n", err)
	return nil
}
