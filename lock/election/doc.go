// Package election elects one leader per key among the processes that
// campaign on it, on any lock.Backend.
//
// A term is one lease of the key, with its own fence, kept alive by a
// heartbeat. Lead is the call most code needs: it campaigns, and runs a
// function each time this process is elected.
//
//	err := election.Lead(ctx, backend, "jobs:scheduler", hostname, func(ctx context.Context, term lock.Lease) error {
//		// This process leads until ctx ends. Pass term.Fence with every write,
//		// so a store that checks fences refuses a stalled former leader.
//		return runScheduler(ctx, term.Fence)
//	}, election.WithTTL(10*time.Second))
//
// A leader that returns, or whose context ends, hands the term to the
// oldest waiting candidate at once. LeaderOf tells who leads; Observe
// reports every change of leader.
//
// What an election does not guarantee: a leader that stalls past its
// term may still act after the next leader started. A term's fence is
// greater than every earlier term's, so pass it with what the leader
// writes and have the store refuse older fences.
//
// On a backend that is also a Store, such as redisbackend, the leader's
// identity is stored with its term, and idle candidates and observers
// touch the store only when a term ends. docs/election.md has the
// guarantees and their limits.
package election
