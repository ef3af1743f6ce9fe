package election

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
)

// Lead campaigns for key as identity and, each time this process is
// elected, runs fn with the term's lease. fn's context ends, with a cause
// matching lock.ErrLeaseLost, the moment the term is lost.
//
// When fn returns nil, the term passes to the next candidate and Lead
// campaigns again. When fn returns an error, Lead releases the term and
// returns it. When ctx ends, Lead hands the term on and returns ctx's
// error, waiting at most a second for the backend; a term won as ctx
// ends is released without calling fn.
//
// opts are WithTTL, WithHeartbeat and WithReleaseErrorHandler. Bad input
// is an InvalidArgument error before any I/O: see Validate.
// docs/election.md tells the details.
func Lead(ctx context.Context, b lock.Backend, key, identity string, fn func(ctx context.Context, term lock.Lease) error, opts ...Option) error {
	c, err := validateLead(ctx, b, key, identity, fn, opts)
	if err != nil {
		return err
	}
	f, leave := follow(b, key, false)
	defer leave()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := campaign(ctx, b, key, c.ttl, f)
		switch {
		case ctx.Err() != nil:
			if err == nil {
				releaseUnused(ctx, b, l)
			}
			return ctx.Err()
		case err != nil:
			return err
		}
		t := &term{b: b, lease: l, identity: identity, config: c}
		ferr, lost, rerr := t.serve(ctx, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ferr != nil && lost == nil && rerr == nil {
			return ferr
		}
	}
}
