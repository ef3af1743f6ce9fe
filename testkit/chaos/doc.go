// Package chaos measures the lock's promise under faults. Workers behind
// toxiproxy proxies take keys and slots of a limit ([LimitKey]) through
// lock.Do, and sets of keys through multilock.Do, and write to a fenced
// register, while Redis is restarted, stopped and paused, connections are
// cut and delayed, replies are lost, and holders pause past their TTL. A [History] of every call is then
// checked: fences, overlaps, the register, linearizability, deadlines.
// RunElection does the same for leader election. docs/testing.md has the
// faults and the checks.
//
// TestChaos runs a short version in `make test`; `make chaos` runs 60 s and
// writes the reports to a file:
//
//	go test -run TestChaos ./testkit/chaos -chaos.duration=60s -chaos.election-duration=60s -chaos.report=chaos-report.txt
package chaos

// The package comment's shell command is not Go, so testkit/readme does
// not check it:
// NOT GO: go test -run TestChaos ./testkit/chaos -chaos.duration=60s -chaos.election-duration=60s -chaos.report=chaos-report.txt
