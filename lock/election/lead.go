package election

import (
	"context"
	"errors"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/event"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Lead campaigns for key as identity and, each time this process is
// elected, runs fn with a context that ends (cause matching
// lock.ErrLeaseLost) the moment the term is lost, and with the term's
// lease. opts are those of lock.Hold (TTL, heartbeat, retry).
//
// When fn returns nil the term ends: its lease is released, which hands
// leadership to the oldest waiting candidate, and Lead campaigns again.
// When fn returns an error while the term is still held, the lease is
// released and Lead returns that error. When the term is lost, Lead
// campaigns again whatever fn returned. When ctx ends, Lead releases the
// term at once (the next candidate leads) and returns ctx's error.
func Lead(ctx context.Context, b lock.Backend, key, identity string, fn func(ctx context.Context, term lock.Lease) error, opts ...lock.Option) error {
	if err := validate("lead", b, key); err != nil {
		return err
	}
	if identity == "" {
		return lockdriver.InvalidArgument("lead", "identity is empty")
	}
	if fn == nil {
		return lockdriver.InvalidArgument("lead", "fn is nil")
	}
	if err := lockdriver.ValidateOptions(opts...); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		held, term, release, err := lock.Hold(ctx, b, key, opts...)
		if errors.Is(err, lock.ErrLocked) {
			continue // the wait ended with another leader: campaign again
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if lock.CodeOf(err) == lock.CodeInvalidArgument {
				return err
			}
			continue
		}
		ferr := event.Term(held, b, term, identity, func(ctx context.Context) error { return fn(ctx, term) })
		lost := context.Cause(held)
		rerr := release()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ferr != nil && lost == nil && rerr == nil {
			return ferr
		}
	}
}
