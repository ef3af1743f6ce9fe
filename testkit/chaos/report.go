package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// LinearizabilityTimeout bounds the porcupine check.
const LinearizabilityTimeout = 2 * time.Minute

// Report is the outcome of a run.
type Report struct {
	Config
	Elapsed time.Duration
	// Do counts lock.Do results by outcome.
	Do map[string]int
	// Calls counts backend calls by "kind: outcome".
	Calls map[string]int
	// CallErrors counts failed (ambiguous) backend calls by "kind: code".
	CallErrors map[string]int
	// Grants is the number of leases granted to workers; LimitGrants
	// those of them that are slots of the limit key.
	Grants, LimitGrants int
	// MaxHolders is the most slots of the limit key seen live at once by
	// the server's clock (see [CheckLimit]).
	MaxHolders int
	// ReadGrants and WriteGrants are the grants of the read-write key;
	// MaxReaders the most readers seen holding it at once by the server's
	// clock (see [CheckReadWrite]).
	ReadGrants, WriteGrants, MaxReaders int
	// Faults counts injected faults by kind.
	Faults map[string]int
	// ReleaseErrors counts releases reported to WithReleaseErrorHandler.
	ReleaseErrors int
	// SilentLoss counts lock.Do calls that returned nil although their
	// release found the lease gone: it expired while fn ran (a pause past
	// the TTL froze the heartbeat too) and nothing told fn or the caller.
	// The fence still rejects the stale writes; this is a finding about
	// Do's return value, not a safety violation.
	SilentLoss int
	// Writes to the register: all, accepted, rejected (stale), and those
	// made after the writer's lease was known lost.
	Writes, Accepted, Rejected, WritesAfterLoss int
	// StaleInLog is the stale writes found by re-checking the register's log.
	StaleInLog int
	// MaxOverlap is the largest overlap of two leases on a key by the
	// server's clock (within OverlapSlack it is not a violation).
	MaxOverlap time.Duration
	// Linearizability is the porcupine result over LinearizedOps operations.
	Linearizability porcupine.CheckResult
	LinearizedOps   int
	// LinearizabilityHTML is porcupine's view of the first key whose
	// history is not linearizable (Linearizability.Visualization); empty
	// when the history is.
	LinearizabilityHTML []byte
	// ScriptCalls is the number of script commands the workers gave
	// go-redis; ScriptWrites the number of copies it wrote to a
	// connection: re-sends included, commands that never got a connection
	// (server down, proxy cut) not.
	ScriptCalls, ScriptWrites int
	// RepliesDropped is the number of script replies lost by the client
	// half of the lost-reply fault.
	RepliesDropped int
	// BusyChecked counts busy acquire replies checked against the key's
	// holder; BusyUnchecked those the observer could not check.
	BusyChecked, BusyUnchecked int
	// Fences is the number of fences the server issued (its counters at
	// the end), HiddenGrants those no worker was told of: grants whose
	// reply was lost, or that were answered busy to their own caller (-1:
	// the counters could not be read).
	Fences, HiddenGrants int
	// OrphanReleases counts, by outcome, releases of lock ids no worker
	// was granted (lock.Acquire freeing an attempt whose reply was lost);
	// UnknownIDExtends extends of such ids.
	OrphanReleases   map[string]int
	UnknownIDExtends int
	// MaxDeadlineOverrun is the longest a call outlived its context's
	// deadline (see [CheckDeadlines]).
	MaxDeadlineOverrun time.Duration
	// Violations are the broken invariants; a correct lock has none.
	Violations []Violation
}

func (r *Report) fill(ops []Op, grants []Grant, writes []Write, errs map[string]int, dos []DoCall) {
	r.Calls = map[string]int{}
	outcomes := [...]string{"ok", "not held", "busy", "failed"}
	for _, op := range ops {
		r.Calls[op.Kind.String()+": "+outcomes[op.Outcome]]++
	}
	r.CallErrors = errs
	r.Grants = len(grants)
	for _, g := range grants {
		switch {
		case g.Limit > 0:
			r.LimitGrants++
		case g.Mode == "read":
			r.ReadGrants++
		case g.Mode == "write":
			r.WriteGrants++
		}
	}

	r.Violations = append(r.Violations, CheckFenceOrder(grants)...)
	vs, over := CheckOverlap(grants)
	r.Violations = append(r.Violations, vs...)
	r.MaxOverlap = over
	vs, r.MaxHolders = CheckLimit(grants)
	r.Violations = append(r.Violations, vs...)
	vs, r.MaxReaders = CheckReadWrite(grants)
	r.Violations = append(r.Violations, vs...)
	vs, stale := CheckRegister(writes)
	r.Violations = append(r.Violations, vs...)
	r.StaleInLog = stale
	if stale != r.Rejected {
		r.Violations = append(r.Violations, Violation{KindRegister,
			fmt.Sprintf("%d stale writes in the log, %d rejected", stale, r.Rejected)})
	}
	r.Violations = append(r.Violations, CheckFalseLeaseLost(ops)...)
	vs, over = CheckDeadlines(ops, dos)
	r.Violations = append(r.Violations, vs...)
	r.MaxDeadlineOverrun = over
	lin := CheckLinearizable(ops, grants, LinearizabilityTimeout)
	r.Linearizability, r.LinearizedOps = lin.Result, lin.Ops
	r.LinearizabilityHTML = lin.Visualization
	if lin.Result == porcupine.Illegal {
		r.Violations = append(r.Violations, Violation{KindLinearizability, fmt.Sprintf(
			"the history is not linearizable against the mutex (semaphore for the limit key, read-write lock for the read-write key) model; keys %s (%s is the limit key)",
			strings.Join(lin.IllegalKeys, " "), lockdriver.HashKey(LimitKey))})
	}
}

// ViolationsByKind counts the violations by [Violation.Check].
func (r *Report) ViolationsByKind() map[string]int { return byCheck(r.Violations) }

// Operations is the number of backend calls made.
func (r *Report) Operations() int { return total(r.Calls) }

// byCheck counts violations by [Violation.Check].
func byCheck(vs []Violation) map[string]int {
	m := map[string]int{}
	for _, v := range vs {
		m[v.Check]++
	}
	return m
}

// total is the sum of m's counts.
func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// writeViolations writes the violations' count, their count by check and
// the first 5 of each check.
func writeViolations(b *strings.Builder, vs []Violation) {
	fmt.Fprintf(b, "\nviolations: %d\n", len(vs))
	counts := byCheck(vs)
	section(b, counts)
	shown := map[string]int{}
	for _, v := range vs {
		if shown[v.Check]++; shown[v.Check] <= 5 {
			fmt.Fprintf(b, "  %s: %s\n", v.Check, v.Detail)
		} else if shown[v.Check] == 6 {
			fmt.Fprintf(b, "  %s: ... %d more\n", v.Check, counts[v.Check]-5)
		}
	}
}

// String formats the report for people.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "syncguard chaos report\n")
	fmt.Fprintf(&b, "run: %v (asked %v), %d workers (%d per client, Backend and toxiproxy proxy), %d lock keys + %d limit key (n = %d), TTL %v, fault gap %v, pause 1 grant in %d, seed %d\n",
		r.Elapsed.Round(time.Millisecond), r.Duration, r.Workers, max(r.PerClient, 1), r.Keys, min(r.Limit, 1), r.Limit, r.TTL, r.Gap, r.PauseEvery, r.Seed)
	calls(&b, r.Calls, r.CallErrors)
	fmt.Fprintf(&b, "lock.Do results:\n")
	section(&b, r.Do)
	fmt.Fprintf(&b, "grants: %d, of which slots of the limit key: %d (fences issued by the server: %d, of which never returned to a caller: %d)\n",
		r.Grants, r.LimitGrants, r.Fences, r.HiddenGrants)
	fmt.Fprintf(&b, "script commands handed to go-redis: %d; copies written to a connection: %d (re-sends included, commands that got no connection not); replies lost by the client fault: %d\n",
		r.ScriptCalls, r.ScriptWrites, r.RepliesDropped)
	if len(r.OrphanReleases) > 0 || r.UnknownIDExtends > 0 {
		fmt.Fprintf(&b, "releases of lock ids never granted to their caller (an acquire whose outcome was unknown, freed), by outcome; extends of such ids: %d\n", r.UnknownIDExtends)
		section(&b, r.OrphanReleases)
	}
	fmt.Fprintf(&b, "busy acquire replies checked against the holder: %d (%d could not be checked)\n", r.BusyChecked, r.BusyUnchecked)
	fmt.Fprintf(&b, "longest a call outlived its context's deadline: %v (grace %v)\n", r.MaxDeadlineOverrun.Round(time.Millisecond), DeadlineGrace)
	fmt.Fprintf(&b, "release failures reported to WithReleaseErrorHandler: %d\n", r.ReleaseErrors)
	fmt.Fprintf(&b, "lock.Do returned nil although its release found the lease gone (expired during fn): %d\n", r.SilentLoss)
	fmt.Fprintf(&b, "\nfaults injected: %d\n", total(r.Faults))
	section(&b, r.Faults)
	fmt.Fprintf(&b, "\nfenced register: %d writes, %d accepted, %d rejected as stale; %d writes made when the writer already knew its lease was lost\n",
		r.Writes, r.Accepted, r.Rejected, r.WritesAfterLoss)
	fmt.Fprintf(&b, "stale writes attempted (re-checked from the register log): %d, rejected: %d\n", r.StaleInLog, r.Rejected)
	fmt.Fprintf(&b, "largest lease overlap on a lock key by the server clock: %v (slack %d ms)\n", r.MaxOverlap, OverlapSlack)
	if r.ReadWrite {
		fmt.Fprintf(&b, "read-write key: %d reader and %d writer grants, at most %d readers at once by the server clock, never a writer beside anyone\n",
			r.ReadGrants, r.WriteGrants, r.MaxReaders)
	}
	if r.Limit > 0 {
		fmt.Fprintf(&b, "most live slots of the limit key at once by the server clock: %d (limit %d)\n", r.MaxHolders, r.Limit)
	}
	fmt.Fprintf(&b, "linearizability (porcupine, mutex with expiring leases, %d slots for the limit key, %d operations): %s\n", r.Limit, r.LinearizedOps, result(r.Linearizability))
	writeViolations(&b, r.Violations)
	return b.String()
}

func result(r porcupine.CheckResult) string {
	switch r {
	case porcupine.Ok:
		return "ok"
	case porcupine.Illegal:
		return "ILLEGAL"
	}
	return "unknown (timed out)"
}

// calls writes the backend calls by kind and outcome, then the failed
// ones by code.
func calls(b *strings.Builder, byOutcome, failed map[string]int) {
	fmt.Fprintf(b, "\noperations (backend calls): %d\n", total(byOutcome))
	section(b, byOutcome)
	if len(failed) > 0 {
		fmt.Fprintf(b, "failed calls by code:\n")
		section(b, failed)
	}
}

func section(b *strings.Builder, m map[string]int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "  %-52s %d\n", k, m[k])
	}
}
