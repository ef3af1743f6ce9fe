package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// KindTermUnrecorded: a term that fn was given has no grant in the
// history: the hooks did not see how Lead took it, so the overlap and
// fence checks cannot vouch for it.
const KindTermUnrecorded = "term not in the history"

// KindOwner: a term's lock data names another candidate as its leader
// ("owner", read by the fence of the term).
const KindOwner = "term names another leader"

// ElectionReport is the outcome of an election run.
type ElectionReport struct {
	ElectionConfig
	Elapsed time.Duration
	// Calls counts backend calls by "kind: outcome"; CallErrors the failed
	// (ambiguous) ones by "kind: code".
	Calls, CallErrors map[string]int
	// Leads counts election.Lead's returns by outcome.
	Leads map[string]int
	// Terms is the number of times fn ran (a term each), TermEnds counts
	// them by how they ended.
	Terms    int
	TermEnds map[string]int
	// Leaderless is how long, in all, no candidate's fn ran (client
	// clock), and MaxLeaderless the longest such stretch: failover time,
	// faults included.
	Leaderless, MaxLeaderless time.Duration
	// Owners counts what each term's lock data, read from the server as
	// the term began, said of its leader (the "owner" member).
	Owners map[string]int
	// Grants is the number of leases of the key the history recorded (a
	// term each, and those Lead took but fn never ran with); Fences the
	// fences the server issued on the key.
	Grants, Fences int
	// Faults counts injected faults by kind.
	Faults map[string]int
	// Writes to the register: all, accepted, rejected (stale), made when
	// the writer's term was known lost; LateWrites those made by a leader
	// waking from a stall, LateRejected of which rejected.
	Writes, Accepted, Rejected, WritesAfterLoss int
	LateWrites, LateRejected                    int
	// StaleInLog is the stale writes found by re-checking the register's log.
	StaleInLog int
	// MaxOverlap is the largest overlap of two leases of the key by the
	// server's clock, from the history (Record); MaxTermOverlap that of two
	// terms fn ran, from their confirmed expiries.
	MaxOverlap, MaxTermOverlap time.Duration
	// MaxDeadlineOverrun is the longest a call outlived its context's
	// deadline.
	MaxDeadlineOverrun time.Duration
	// Linearizability is the porcupine result over LinearizedOps operations.
	Linearizability porcupine.CheckResult
	LinearizedOps   int
	Violations      []Violation
}

// fill runs the checks: on the terms fn ran (no overlap by the server's
// clock, fences increasing across terms and per candidate) and the
// register's writes; with Record, the lock run's on the key's history
// too, and that every term is a grant of it.
func (r *ElectionReport) fill(ops []Op, grants []Grant, writes []Write, errs map[string]int, run *electionRun) {
	r.Calls = map[string]int{}
	outcomes := [...]string{"ok", "not held", "busy", "failed"}
	for _, op := range ops {
		r.Calls[op.Kind.String()+": "+outcomes[op.Outcome]]++
	}
	r.CallErrors = errs
	r.Grants = len(grants)
	run.mu.Lock()
	terms := append([]Term(nil), run.terms...)
	r.Leads, r.Owners = run.leads, run.owners
	r.Violations = append(r.Violations, run.found...)
	r.LateWrites, r.LateRejected = run.late, run.lateRej
	run.mu.Unlock()
	r.Writes, r.Accepted, r.Rejected = int(run.writes.writes.Load()), int(run.writes.accepted.Load()), int(run.writes.rejected.Load())
	r.WritesAfterLoss = int(run.writes.afterLoss.Load())
	r.Terms, r.TermEnds = len(terms), map[string]int{}
	r.Leaderless, r.MaxLeaderless = leaderless(terms)

	vs, over := CheckTermOverlap(terms)
	r.Violations = append(r.Violations, vs...)
	r.MaxTermOverlap = over
	if !r.Record {
		grants = nil // no history: every term is unrecorded
	}
	r.Violations = append(r.Violations, checkTerms(terms, grants, r.TermEnds)...)
	vs, r.StaleInLog = CheckRegister(writes)
	r.Violations = append(r.Violations, vs...)
	if r.StaleInLog != r.Rejected {
		r.Violations = append(r.Violations, Violation{KindRegister,
			fmt.Sprintf("%d stale writes in the log, %d rejected", r.StaleInLog, r.Rejected)})
	}
	if !r.Record {
		return
	}
	r.Violations = append(r.Violations, CheckFenceOrder(grants)...)
	vs, r.MaxOverlap = CheckOverlap(grants)
	r.Violations = append(r.Violations, vs...)
	r.Violations = append(r.Violations, CheckFalseLeaseLost(ops)...)
	vs, r.MaxDeadlineOverrun = CheckDeadlines(ops, nil)
	r.Violations = append(r.Violations, vs...)
	lin := CheckLinearizable(ops, grants, LinearizabilityTimeout)
	r.Linearizability, r.LinearizedOps = lin.Result, lin.Ops
	if lin.Result == porcupine.Illegal {
		r.Violations = append(r.Violations, Violation{KindLinearizability,
			"the history of the election's key is not linearizable against the mutex model"})
	}
}

// CheckTermOverlap checks the terms fn ran by the server's clock: in the
// order they were granted, every term starts no earlier than every
// earlier term ended ([Term.EndMs], minus [OverlapSlack]), and has a
// higher fence than each of them. It also returns the largest overlap seen.
func CheckTermOverlap(terms []Term) (vs []Violation, maxOverlap time.Duration) {
	ts := append([]Term(nil), terms...)
	sort.SliceStable(ts, func(i, j int) bool { return ts[i].AcquiredMs < ts[j].AcquiredMs })
	var end int64
	var last, top Term // the earlier term that ends last; the one with the highest fence
	for i, t := range ts {
		if i > 0 && t.AcquiredMs < end {
			over := time.Duration(end-t.AcquiredMs) * time.Millisecond
			maxOverlap = max(maxOverlap, over)
			if end-t.AcquiredMs > OverlapSlack {
				vs = append(vs, Violation{KindOverlap, fmt.Sprintf("term of fence %s (candidate %d) began %v before the term of fence %s (candidate %d) ended",
					t.Fence, t.Candidate, over, last.Fence, last.Candidate)})
			}
		}
		if i > 0 && t.Fence <= top.Fence && t.AcquiredMs > top.AcquiredMs {
			vs = append(vs, Violation{KindFenceOrder, fmt.Sprintf("term of fence %s (candidate %d) began after the term of fence %s (candidate %d)",
				t.Fence, t.Candidate, top.Fence, top.Candidate)})
		}
		if e := t.EndMs(); i == 0 || e > end {
			end, last = e, t
		}
		if i == 0 || t.Fence > top.Fence {
			top = t
		}
	}
	return vs, maxOverlap
}

// checkTerms checks the terms fn ran: each is a grant of the history
// (whose server-side interval the overlap check saw; without a history,
// grants is nil and this is not checked), and each candidate's terms have
// strictly increasing fences (a candidate campaigns again only after its
// term ended). It counts the terms by how they ended into ends.
func checkTerms(terms []Term, grants []Grant, ends map[string]int) []Violation {
	granted := map[string]bool{}
	for _, g := range grants {
		granted[g.Key+"\x00"+string(g.Fence)] = true
	}
	var vs []Violation
	last := map[int]Term{}
	for _, t := range terms {
		ends[t.End]++
		if grants != nil && !granted[ElectionKey+"\x00"+string(t.Fence)] {
			vs = append(vs, Violation{KindTermUnrecorded, fmt.Sprintf("candidate %d: term of fence %s", t.Candidate, t.Fence)})
		}
		if p, ok := last[t.Candidate]; ok && t.Fence <= p.Fence {
			vs = append(vs, Violation{KindFenceOrder, fmt.Sprintf("candidate %d: a term of fence %s after its term of fence %s",
				t.Candidate, t.Fence, p.Fence)})
		}
		last[t.Candidate] = t
	}
	return vs
}

// leaderless sums the stretches of time between the first term's start
// and the last term's end when no term's fn ran, and returns the longest.
func leaderless(terms []Term) (sum, longest time.Duration) {
	ts := append([]Term(nil), terms...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].StartNs < ts[j].StartNs })
	var end int64
	for i, t := range ts {
		if gap := time.Duration(t.StartNs - end); i > 0 && gap > 0 {
			sum += gap
			longest = max(longest, gap)
		}
		end = max(end, t.EndNs)
	}
	return sum, longest
}

// ViolationsByKind counts the violations by [Violation.Check].
func (r *ElectionReport) ViolationsByKind() map[string]int { return byCheck(r.Violations) }

// Operations is the number of backend calls made.
func (r *ElectionReport) Operations() int { return total(r.Calls) }

// String formats the report for people.
func (r *ElectionReport) String() string {
	var b strings.Builder
	backend := "redisbackend's Backend itself, as users run it (calls not recorded)"
	if r.Record {
		backend = "redisbackend's Backend under lock.WithHooks, every call recorded"
	}
	fmt.Fprintf(&b, "syncguard chaos report: leader election on %s\n", backend)
	fmt.Fprintf(&b, "run: %v (asked %v), %d candidates (election.Lead, a go-redis client with default options, Backend and toxiproxy proxy each), TTL %v, fault gap %v, seed %d\n",
		r.Elapsed.Round(time.Millisecond), r.Duration, r.Candidates, r.TTL, r.Gap, r.Seed)
	if r.Record {
		calls(&b, r.Calls, r.CallErrors)
	}
	fmt.Fprintf(&b, "election.Lead returns:\n")
	section(&b, r.Leads)
	fmt.Fprintf(&b, "terms (fn runs): %d; fences issued by the server: %d", r.Terms, r.Fences)
	if r.Record {
		fmt.Fprintf(&b, "; leases of the key granted (history): %d", r.Grants)
	}
	fmt.Fprintf(&b, "\n")
	fmt.Fprintf(&b, "time without a leader (no fn running, client clock): %v in all, %v at most\n",
		r.Leaderless.Round(time.Millisecond), r.MaxLeaderless.Round(time.Millisecond))
	fmt.Fprintf(&b, "terms by how they ended:\n")
	section(&b, r.TermEnds)
	fmt.Fprintf(&b, "the term's lock data read as it began (its \"owner\" member):\n")
	section(&b, r.Owners)
	if r.Record {
		fmt.Fprintf(&b, "longest a call outlived its context's deadline: %v (grace %v)\n", r.MaxDeadlineOverrun.Round(time.Millisecond), DeadlineGrace)
	}
	fmt.Fprintf(&b, "\nfaults injected: %d\n", total(r.Faults))
	section(&b, r.Faults)
	fmt.Fprintf(&b, "\nfenced register: %d writes, %d accepted, %d rejected as stale; %d writes made when the writer already knew its term was lost\n",
		r.Writes, r.Accepted, r.Rejected, r.WritesAfterLoss)
	fmt.Fprintf(&b, "writes of leaders waking from a stall past their TTL: %d, rejected: %d (accepted only while no newer term had written)\n", r.LateWrites, r.LateRejected)
	fmt.Fprintf(&b, "stale writes attempted (re-checked from the register log): %d, rejected: %d\n", r.StaleInLog, r.Rejected)
	fmt.Fprintf(&b, "largest overlap of two terms by the server clock (from their confirmed expiries): %v (slack %d ms)\n", r.MaxTermOverlap, OverlapSlack)
	if r.Record {
		fmt.Fprintf(&b, "largest overlap of two leases of the key by the server clock (from the history): %v\n", r.MaxOverlap)
		fmt.Fprintf(&b, "linearizability (porcupine, mutex with expiring leases, %d operations): %s\n", r.LinearizedOps, result(r.Linearizability))
	}
	writeViolations(&b, r.Violations)
	return b.String()
}
