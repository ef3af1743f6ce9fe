// Package chaos measures the lock's promise under faults: N workers (in
// twos by default, each pair sharing a go-redis client and a Backend, so
// that one waits for a key the other holds in their process: Config's
// PerClient) behind in-process toxiproxy proxies, one per client,
// take M keys through lock.Do with a short TTL and write to a fenced
// register, and take slots of one more key, a concurrency limit of 2
// (lock.WithLimit; [LimitKey]), through lock.Do too, while the Redis process is restarted, stopped, paused with
// SIGSTOP, and connections are cut, reset and delayed, replies are lost
// after their command ran, and workers pause past their TTL while holding.
//
// The workers' clients use go-redis's default options, as users do:
// MaxRetries 3 (a command whose reply is lost is sent again, so a script
// may run twice), no context timeouts, 3 s read timeout. Hooks on them only
// observe (and inject the client half of the lost-reply fault: the reply of
// a script command that ran is swallowed and go-redis sees EOF). Every
// lock.Do runs under a context with a deadline, as a request would.
//
// Every acquisition (of a lock or a slot, attempt of a queued waiter and
// lease handed over by a release included), extension (one per lease of a
// batch) and release (with a done marker or record or not) is recorded
// once, whatever go-redis did underneath (with client-side call and return
// times, the context's deadline and the server's lease times), by a
// lock.Hook on each worker's backend ([History.Hook]; lookups are recorded
// too, for the deadline check); a call that failed is ambiguous: it may
// have run, and is never a violation by itself. The history is
// checked afterwards: fences strictly increase per key in server grant
// order (slots included); no two server-side lease intervals on a lock key
// overlap, and at no instant do more than 2 slots of the limit key live
// ([CheckLimit]); the register never accepted a write whose fence was
// below one it had accepted (slots write nothing: two holders run side by
// side by design); the history is linearizable against a
// semaphore-with-expiry model, one slot for a lock key and 2 for the
// limit key (porcupine); no release or extend answered "not held" while
// its lease (a lock or a slot) was live and unreleased (a false lease
// loss); every backend call and every lock.Do ended by its context's
// deadline, within [DeadlineGrace]. While the run goes on, every busy
// acquire reply is checked against the key's holders: an acquire answered
// busy while the key (or one of its slots) is held under its own lock id
// (an earlier copy of it took it) orphans the lock or the slot.
//
// RunElection does the same for leader election: candidates run
// election.Lead on one key under faults on the leader and the server, and
// the history of the key is checked the same way (docs/testing.md).
//
// The run is TestChaos (the locks, then the election). `go test
// ./testkit/chaos` runs a 10 s version, and 8 s of election (part
// of `make test`, -short included); `make chaos` runs each for 60 s and
// writes the reports to a file:
//
//	go test -run TestChaos ./testkit/chaos -chaos.duration=60s -chaos.election-duration=60s -chaos.report=chaos-report.txt
package chaos

// The package comment's shell command is not Go, so testkit/readme does
// not check it:
// NOT GO: go test -run TestChaos ./testkit/chaos -chaos.duration=60s -chaos.election-duration=60s -chaos.report=chaos-report.txt
