package redisbackend_test

import (
	"context"
	"errors"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The README's snippets for lock.Do and lock.Hold on this backend, kept
// compiling (they need a live Redis, so nothing calls them); testkit/readme
// checks that README.md quotes the marked regions verbatim.

// The snippets are compiled, not run: referenced here so that linters
// (staticcheck U1000) do not report them unused.
var _ = []any{readmeUsage, readmeHold, readmeLimit, readmeFront}

// invoiceStore is the fenced resource of the README's Usage snippet.
type invoiceStore interface {
	UpdateInvoice(ctx context.Context, id int, status string, fence lock.Fence) error
}

func readmeUsage(ctx context.Context, store invoiceStore, paid string) error {
	// README: usage
	// ContextTimeoutEnabled: go-redis ends a call at its context's deadline,
	// so no call needs a goroutine of its own to return by it.
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	backend, err := redisbackend.New(rdb, nil) // prefix "syncguard"
	if err != nil {
		log.Fatal(err)
	}
	// END README

	err = lock.Do(ctx, backend, "invoice:42", func(ctx context.Context, l lock.Lease) error {
		// ctx is cancelled (cause lock.ErrLeaseLost) if the lease is lost.
		return store.UpdateInvoice(ctx, 42, paid, l.Fence) // the store rejects older fences
	}, lock.WithTTL(30*time.Second), lock.WithWait(5*time.Second))

	switch {
	case errors.Is(err, lock.ErrLocked): // gave up waiting (CodeAcquisitionTimeout)
	case errors.Is(err, lock.ErrLeaseLost): // the work ran but the lease was lost meanwhile
	case err != nil: // fn's error, or a system error (*lock.Error with a Code)
	}
	return err
}

func readmeHold(ctx context.Context, backend *redisbackend.Backend, work func(context.Context, lock.Fence)) error {
	// README: hold
	held, l, release, err := lock.Hold(ctx, backend, "report:2026-11", lock.WithTTL(time.Minute))
	if err != nil {
		return err // lock.ErrLocked (CodeAcquisitionTimeout) if the key stayed busy
	}
	defer release() // idempotent: also frees the key if work panics

	work(held, l.Fence) // held ends (cause lock.ErrLeaseLost) if the lease is lost
	return release()    // non-nil (lock.ErrLeaseLost) if the lease was lost
	// END README
}

func readmeLimit(ctx context.Context, b lock.Backend, userID string, runExport func(context.Context, lock.Fence) error) error {
	// README: limit
	err := lock.Do(ctx, b, "exports:"+userID, func(ctx context.Context, l lock.Lease) error {
		return runExport(ctx, l.Fence) // at most 3 of these run at once, fleet-wide
	}, lock.WithLimit(3), lock.WithWait(30*time.Second))
	// END README
	return err
}

// The README's first example: a fenced lock.
func readmeFront(ctx context.Context, store invoiceStore, paid string) error {
	// README: front-lock
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	backend, err := redisbackend.New(rdb, nil) // keys under the prefix "syncguard"
	if err != nil {
		log.Fatal(err)
	}
	err = lock.Do(ctx, backend, "invoice:42", func(ctx context.Context, l lock.Lease) error {
		// ctx ends (cause lock.ErrLeaseLost) if the lease is lost.
		return store.UpdateInvoice(ctx, 42, paid, l.Fence) // the store refuses older fences
	})
	// END README
	return err
}
