// Transfer moves money between accounts with multi-key locks: each
// transfer takes both accounts with multilock.Do, whatever order it names
// them in, so workers moving money both ways between the same accounts
// never deadlock, and every account's writes carry that account's fence.
//
// It runs on an embedded Redis, or on REDIS_URL under a random prefix,
// and exits non-zero when money is lost or created, or a transfer fails.
//
//	make demo        # or: go run ./examples/transfer
//	REDIS_URL=redis://localhost:6379/0 go run ./examples/transfer
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/multilock"
)

const (
	accounts  = 4
	workers   = 6
	transfers = 10 // per worker
	opening   = 100
)

func main() { demorun.Main("transfer", demo) }

// bank is the accounts' balances and the highest fence each accepted: a
// write with a lower fence is refused, as a fenced store does.
type bank struct {
	mu      sync.Mutex
	balance map[string]int
	fence   map[string]lock.Fence
}

// move moves amount from one account to another under their leases.
func (k *bank) move(from, to lock.Lease, amount int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, l := range []lock.Lease{from, to} {
		if l.Fence.Compare(k.fence[l.Key]) < 0 {
			return fmt.Errorf("stale fence %s on %s", l.Fence, l.Key)
		}
		k.fence[l.Key] = l.Fence
	}
	k.balance[from.Key] -= amount
	k.balance[to.Key] += amount
	return nil
}

// demo runs the transfers on env's Redis.
func demo(ctx context.Context, env *demorun.Env) error {
	backend, err := env.Backend("transfer")
	if err != nil {
		return err
	}
	k := &bank{balance: map[string]int{}, fence: map[string]lock.Fence{}}
	names := make([]string, accounts)
	for i := range names {
		// One hash tag: on Redis Cluster the accounts share a slot, and one
		// script takes both keys of a transfer.
		names[i] = fmt.Sprintf("{bank}:acct:%d", i+1)
		k.balance[names[i]] = opening
	}
	fmt.Fprintf(env.Out, "\n== Transfers ==\n%d workers make %d transfers each between %d accounts, naming the two\n"+
		"accounts in either order; multilock.Do takes both, in one order, or waits.\n", workers, transfers, accounts)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() { errs[w] = work(ctx, env, backend, k, names, w) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	total := 0
	for _, n := range names {
		total += k.balance[n]
	}
	if total != accounts*opening {
		return fmt.Errorf("the accounts hold %d in all, want %d", total, accounts*opening)
	}
	fmt.Fprintf(env.Out, "\nOK: %d transfers in %v, no deadlock; the accounts still hold %d in all\n",
		workers*transfers, time.Since(start).Round(time.Millisecond), total)
	return nil
}

// work is one worker's transfers, between random accounts.
func work(ctx context.Context, env *demorun.Env, b lock.Backend, k *bank, names []string, w int) error {
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	for t := range transfers {
		pair := rng.Perm(accounts)[:2]
		from, to := names[pair[0]], names[pair[1]]
		amount := 1 + rng.IntN(10)
		err := multilock.Do(ctx, b, []string{from, to}, func(ctx context.Context, leases []lock.Lease) error {
			if w == 0 && t < 2 {
				fmt.Fprintf(env.Out, "worker %d moves %d from %s (fence %s) to %s (fence %s)\n",
					w, amount, from, leases[0].Fence, to, leases[1].Fence)
			}
			return k.move(leases[0], leases[1], amount)
		}, lock.WithTTL(2*time.Second), lock.WithWait(10*time.Second))
		if err != nil {
			return fmt.Errorf("worker %d: %w", w, err)
		}
	}
	return nil
}
