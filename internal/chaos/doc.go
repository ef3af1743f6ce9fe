// Package chaos measures the lock's promise under faults: N workers, each
// with its own go-redis client behind its own in-process toxiproxy proxy,
// take M keys through lock.Do with a short TTL and write to a fenced
// register, while the Redis process is restarted, stopped, paused with
// SIGSTOP, and connections are cut, reset and delayed, and workers pause
// past their TTL while holding.
//
// Every Acquire, Extend and Release is recorded (with client-side call and
// return times and the server's lease times), and the history is checked
// afterwards: fences strictly increase per key in server grant order; no
// two server-side lease intervals on a key overlap; the register never
// accepted a write whose fence was below one it had accepted; and the
// history is linearizable against a mutex-with-expiry model (porcupine).
//
// The run is TestChaos. `go test ./internal/chaos` runs a short version
// (a few seconds, part of `make test`); `make chaos` runs it for 60 s and
// writes the report to a file:
//
//	go test -run TestChaos ./internal/chaos -chaos.duration=60s -chaos.report=chaos-report.txt
package chaos
