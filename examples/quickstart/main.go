// Quickstart is a tour of syncguard-go in two parts, on one key:
//
//  1. One holder at a time: four workers compete for "invoice:42" through
//     lock.Do, and each writes to a fenced [Register] with its lease's fence.
//  2. The stale holder: a worker whose lease expires while it is paused
//     wakes up and writes anyway; the register rejects the write because
//     its fence is older than that of the worker that took the lock next.
//
// It needs no set-up: by default it runs on an embedded Redis (miniredis).
//
//	make demo        # or: go run ./examples/quickstart
//
// To use a real Redis server instead, set REDIS_URL. All keys go under a
// random prefix (quickstart:<hex>) and are deleted at the end; nothing else
// on the server is touched.
//
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/quickstart
//
// It exits non-zero when the library misbehaves, such as when the stale
// write is accepted.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demoredis"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

const (
	key     = "invoice:42"
	workers = 4
)

// opts are the lock.Do options of every worker: a short TTL (lock.Do keeps
// the lease alive while the work runs) and a bound on waiting for the key.
var opts = []lock.Option{lock.WithTTL(2 * time.Second), lock.WithTimeout(5 * time.Second)}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart FAILED:", err)
		os.Exit(1)
	}
}

// run connects to Redis (REDIS_URL, or an embedded miniredis) and runs the
// demo.
func run(ctx context.Context, w io.Writer) error {
	s, err := connect(ctx, w, os.Getenv("REDIS_URL"))
	if err != nil {
		return err
	}
	defer s.close()
	_, err = demo(ctx, w, s)
	return err
}

// demo runs both parts on s and returns the register for inspection.
func demo(ctx context.Context, w io.Writer, s *server) (*Register, error) {
	backend, err := redisbackend.New(s.client, &redisbackend.Options{Prefix: s.prefix})
	if err != nil {
		return nil, err
	}
	reg := NewRegister()
	if err := oneAtATime(ctx, w, backend, reg); err != nil {
		return reg, fmt.Errorf("part 1: %w", err)
	}
	if err := staleHolder(ctx, w, backend, reg, s.expire); err != nil {
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
		mu   sync.Mutex // guards w and errs: the workers are goroutines
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
				time.Sleep(20 * time.Millisecond) // hold the lock a moment, so the others must wait
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

// server is the Redis the demo runs on.
type server struct {
	client *redis.Client
	prefix string // random per run, so other keys on a real server are never touched
	// expire waits until a lease of ttl has expired.
	expire func(ctx context.Context, ttl time.Duration)
	close  func()
}

// connect sets up the Redis of the demo (see demoredis) and how to wait
// for a lease to expire on it.
func connect(ctx context.Context, w io.Writer, url string) (*server, error) {
	client, mr, closeFn, err := demoredis.ConnectMini(ctx, w, url)
	if err != nil {
		return nil, err
	}
	s := &server{client: client, prefix: demoredis.Prefix("quickstart"), close: closeFn}
	if mr != nil {
		// miniredis never expires keys on its own: move its clock instead.
		s.expire = func(_ context.Context, ttl time.Duration) { mr.FastForward(ttl + 2*time.Second) }
	} else {
		// A lease stays live for lock.TimeTolerance past its expiry.
		s.expire = func(ctx context.Context, ttl time.Duration) {
			select {
			case <-ctx.Done():
			case <-time.After(ttl + lock.TimeTolerance + 200*time.Millisecond):
			}
		}
	}
	fmt.Fprintf(w, "Keys:  %s:*\n", s.prefix)
	return s, nil
}
