package election

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
)

// Lead campaigns for key as identity and, each time this process is
// elected, runs fn with the term's lease and a context that ends (cause
// matching lock.ErrLeaseLost) the moment the term is lost. A term is one
// lease of key with its own fence, kept alive by a heartbeat. opts are
// lock's: lock.WithTTL (at least MinTTL; it bounds the failover after a
// crash), lock.WithHeartbeat (its interval at most half the TTL), the
// release options but WithReleaseTimeout. It refuses lock.WithWait,
// lock.WithRetry, lock.WithReleaseTimeout and lock.WithLimit.
//
// When fn returns nil the term ends: its lease is released, which hands
// leadership to the oldest waiting candidate, and Lead campaigns again.
// When fn returns an error while the term is still held, the lease is
// released and Lead returns that error. When the term is lost, Lead
// campaigns again whatever fn returned. When fn panics, the term is
// released and the panic goes on. When ctx ends, Lead hands the term on,
// or one handed to it at that moment, and returns ctx's error. It waits
// at most a second for the backend after fn returns or ctx ends.
//
// Lead returns a *lock.Error with lock.CodeInvalidArgument, before any
// I/O, for a nil backend or fn, a bad key, an empty or over-long identity
// (MaxIdentityBytes) and bad options; and a backend error that is not
// transient (such as lock.CodeAuthFailed). Transient errors are retried.
func Lead(ctx context.Context, b lock.Backend, key, identity string, fn func(ctx context.Context, term lock.Lease) error, opts ...lock.Option) error {
	s, err := validateLead(ctx, b, key, identity, fn, opts)
	if err != nil {
		return err
	}
	f, leave := follow(b, key, false)
	defer leave()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := campaign(ctx, b, key, s.TTL, f)
		switch {
		case ctx.Err() != nil:
			if err == nil {
				releaseUnused(ctx, b, l)
			}
			return ctx.Err()
		case err != nil:
			return err
		}
		t := &term{b: b, lease: l, identity: identity, settings: s}
		ferr, lost, rerr := t.serve(ctx, fn, opts)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ferr != nil && lost == nil && rerr == nil {
			return ferr
		}
	}
}
