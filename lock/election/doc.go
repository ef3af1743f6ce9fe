// Package election elects one leader per key among the processes that
// campaign on it, on any lock.Backend: a term is one lease of the key, with
// its own fence, kept alive by a heartbeat; the leader's context ends the
// moment the term is lost. Lead campaigns and runs a function while this
// process leads; LeaderOf and Observe tell who leads.
//
// A term's fence is strictly greater than every earlier term's, so a
// leader that stalled past its lease and woke up believing it still leads
// is refused by any store that checks fences. Pass the term's fence to what
// the leader writes. docs/election.md has the guarantees and their limits.
package election
