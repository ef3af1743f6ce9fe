// Package election elects one leader per key among the processes that
// campaign on it, on any lock.Backend. A term is one lease of the key, with
// its own fence, kept alive by a heartbeat; the leader's context ends the
// moment the term is lost.
//
// Lead campaigns and runs a function while this process leads: a leader
// that returns nil or whose context ends hands the term to the oldest
// waiting candidate at once, by the backend's queue (lock.IDBackend), not
// at the TTL's expiry. LeaderOf tells who leads; Observe reports every
// change of leader.
//
// A term's fence is strictly greater than every earlier term's, so a
// leader that stalled past its lease and woke up believing it still leads
// is refused by any store that checks fences. Pass the term's fence to what
// the leader writes.
//
// On a backend that is also a Store (redisbackend is), the leader's
// identity is stored with its term, and the leader announces each
// extension of its term on a channel: idle candidates and observers, which
// share one watcher per backend and key in a process, then touch the store
// only when a term ends or its expiry passes unannounced. On other
// backends they read the key at each term's expiry.
//
// docs/election.md has the guarantees and their limits.
package election
