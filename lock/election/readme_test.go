package election_test

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
)

// Regions quoted by docs/election.md (testkit/readme checks them).

func exampleLead(ctx context.Context, backend lock.Backend, hostname string, runScheduler func(context.Context, lock.Fence) error) error {
	// README: election-lead
	err := election.Lead(ctx, backend, "jobs:scheduler", hostname, func(ctx context.Context, term lock.Lease) error {
		// This process leads until ctx ends. Pass term.Fence with every write,
		// so a store that checks fences refuses a stalled former leader.
		return runScheduler(ctx, term.Fence)
	}, election.WithTTL(10*time.Second))
	// END README
	return err
}

var _ = exampleLead
