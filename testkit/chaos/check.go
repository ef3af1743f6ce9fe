package chaos

import (
	"fmt"
	"sort"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// OverlapSlack is how far (server clock, milliseconds) a grant may start
// before the previous lease on its key ended without counting as an
// overlap. The clients and redis-server read the same host clock, so this
// only absorbs Redis's millisecond truncation; the store's own
// TIME_TOLERANCE (1 s) is far larger and is not granted here.
const OverlapSlack = 5

// Violation is a broken invariant found in the history.
type Violation struct {
	Check  string
	Detail string
}

// CheckFenceOrder checks that, per key, fences strictly increase in the
// server's grant order: a grant acquired earlier (server clock) has a
// lower fence, and no fence is granted twice. Grants in the same
// millisecond are not ordered by the clock and are checked only for
// uniqueness.
func CheckFenceOrder(grants []Grant) []Violation {
	var vs []Violation
	for key, gs := range byKey(grants) {
		sort.Slice(gs, func(i, j int) bool { return gs[i].Fence < gs[j].Fence })
		for i := 1; i < len(gs); i++ {
			if gs[i].Fence == gs[i-1].Fence {
				vs = append(vs, Violation{KindFenceOrder, fmt.Sprintf("key %s: fence %s granted twice (workers %d and %d)",
					lockdriver.HashKey(key), gs[i].Fence, gs[i-1].Worker, gs[i].Worker)})
			}
		}
		// Every earlier-by-fence grant must not be later-by-clock.
		maxAcq := int64(0)
		var maxG Grant
		for _, g := range gs {
			if g.AcquiredMs < maxAcq {
				vs = append(vs, Violation{KindFenceOrder, fmt.Sprintf("key %s: fence %s acquired at %d ms, after fence %s at %d ms",
					lockdriver.HashKey(key), maxG.Fence, maxAcq, g.Fence, g.AcquiredMs)})
			}
			if g.AcquiredMs > maxAcq {
				maxAcq, maxG = g.AcquiredMs, g
			}
		}
	}
	return vs
}

// CheckOverlap checks mutual exclusion by the server's clock: per lock
// key, in fence order, every grant starts no earlier than every earlier
// lease on the key ended ([Grant.EndMs], minus [OverlapSlack]). It also
// returns the largest overlap seen (0 when none). Keys taken as
// concurrency limits are [CheckLimit]'s, read-write keys
// [CheckReadWrite]'s.
func CheckOverlap(grants []Grant) (vs []Violation, maxOverlap time.Duration) {
	for key, gs := range byKey(grants) {
		if gs[0].Limit != 0 || gs[0].Mode != "" {
			continue
		}
		sort.Slice(gs, func(i, j int) bool { return gs[i].Fence < gs[j].Fence })
		var prevEnd int64
		var prev Grant
		for i, g := range gs {
			if i > 0 && g.AcquiredMs < prevEnd {
				over := time.Duration(prevEnd-g.AcquiredMs) * time.Millisecond
				maxOverlap = max(maxOverlap, over)
				if prevEnd-g.AcquiredMs > OverlapSlack {
					vs = append(vs, Violation{KindOverlap, fmt.Sprintf(
						"key %s: fence %s (worker %d) acquired %v before fence %s (worker %d) ended",
						lockdriver.HashKey(key), g.Fence, g.Worker, over, prev.Fence, prev.Worker)})
				}
			}
			if e := g.EndMs(); e > prevEnd {
				prevEnd, prev = e, g
			}
		}
	}
	return vs, maxOverlap
}

// CheckRegister re-checks the fenced register from its log: per key, a
// write is accepted if and only if its fence is at least the highest
// accepted before it. It returns the violations and the number of stale
// writes (fence below the highest accepted) seen in the log.
func CheckRegister(log []Write) (vs []Violation, stale int) {
	highest := map[string]lock.Fence{}
	for i, w := range log {
		isStale := w.Fence < highest[w.Key]
		if isStale {
			stale++
		}
		switch {
		case isStale && w.Accepted:
			vs = append(vs, Violation{KindRegister, fmt.Sprintf("write %d: stale fence %s accepted over %s", i, w.Fence, highest[w.Key])})
		case !isStale && !w.Accepted:
			vs = append(vs, Violation{KindRegister, fmt.Sprintf("write %d: current fence %s rejected", i, w.Fence)})
		}
		if w.Accepted && w.Fence > highest[w.Key] {
			highest[w.Key] = w.Fence
		}
	}
	return vs, stale
}

func byKey(grants []Grant) map[string][]Grant {
	m := map[string][]Grant{}
	for _, g := range grants {
		m[g.Key] = append(m[g.Key], g)
	}
	return m
}

// DeadlineGrace is how long a call may outlive its context's deadline
// before [CheckDeadlines] reports it: scheduling under -race on a busy
// machine, never a stalled server.
const DeadlineGrace = 500 * time.Millisecond

// The kinds of violation, as [Violation.Check].
const (
	KindFenceOrder      = "fence-order"
	KindOverlap         = "overlap"
	KindRegister        = "register"
	KindLinearizability = "linearizability"
	// KindFalseLeaseLost: a release or extend answered "not held" while
	// the lease was live and nobody else had released it (the lease was
	// not lost; a re-sent release finding its own earlier run's work done
	// looks like this). lock.Do then reports ErrLeaseLost after a clean run.
	KindFalseLeaseLost = "false lease lost"
	// KindSelfBusy: an acquire was answered "locked" while the key was
	// held under the very lock id it asked with (an earlier copy of the
	// command, re-sent after its reply was lost, took it): nobody holds
	// the lock knowingly and it blocks everyone for its TTL.
	KindSelfBusy = "self-inflicted busy (orphaned lock)"
	// KindOverran: a call outlived its context's deadline by more than
	// [DeadlineGrace].
	KindOverran = "overran deadline"
)

// CheckFalseLeaseLost checks that "not held" answers are true: a Release
// or Extend of a lease that answered lock.ErrNotHeld must not have
// returned before the lease's expiry as known before the call (from a
// grant or extension that had returned by then, minus [OverlapSlack]),
// unless another Release of the lease was sent before it returned. Failed
// (ambiguous) calls are not facts: an ambiguous Extend may only have made
// the lease longer, an ambiguous Release counts as a release.
func CheckFalseLeaseLost(ops []Op) []Violation {
	type lease struct {
		facts    []Op // successful acquires and extends
		releases []Op
	}
	leases := map[string]*lease{}
	get := func(op Op) *lease {
		id := op.Key + "\x00" + string(op.Fence)
		l := leases[id]
		if l == nil {
			l = &lease{}
			leases[id] = l
		}
		return l
	}
	for _, op := range ops {
		switch {
		case op.Outcome == OK && (op.Kind == Acquire || op.Kind == Extend):
			l := get(op)
			l.facts = append(l.facts, op)
		case op.Kind == Release:
			l := get(op)
			l.releases = append(l.releases, op)
		}
	}
	var vs []Violation
	for _, op := range ops {
		if op.Outcome != NotHeld {
			continue
		}
		l := get(op)
		var live int64 // the latest expiry known before op was called, server ms
		for _, f := range l.facts {
			if f.ReturnNs <= op.CallNs && f.ExpiresMs > live {
				live = f.ExpiresMs
			}
		}
		retMs := op.ReturnNs / int64(time.Millisecond)
		if live-retMs <= OverlapSlack {
			continue // it may have expired before the call ran
		}
		released := false
		for _, r := range l.releases {
			if r.CallNs != op.CallNs && r.CallNs < op.ReturnNs {
				released = true
			}
		}
		if released {
			continue
		}
		vs = append(vs, Violation{KindFalseLeaseLost, fmt.Sprintf(
			"key %s: %s of fence %s (worker %d) answered not held %v before the lease's known expiry, and nothing else released it",
			lockdriver.HashKey(op.Key), op.Kind, op.Fence, op.Worker, time.Duration(live-retMs)*time.Millisecond)})
	}
	return vs
}

// CheckDeadlines checks that calls end by their context's deadline, within
// [DeadlineGrace]: every backend call (a call made after its deadline must
// return at once), and every lock.Do. Do's release runs after fn on a
// context of its own bounded by the release timeout, so a Do whose fn ran
// must return by the later of its deadline and fn's return plus the release
// timeout. It returns the violations and the largest overrun seen.
func CheckDeadlines(ops []Op, dos []DoCall) (vs []Violation, maxOver time.Duration) {
	for _, op := range ops {
		if op.DeadlineNs == 0 {
			continue
		}
		over := time.Duration(op.ReturnNs - max(op.DeadlineNs, op.CallNs))
		maxOver = max(maxOver, over)
		if over > DeadlineGrace {
			vs = append(vs, Violation{KindOverran, fmt.Sprintf("key %s: backend %s (worker %d) returned %v after its context's deadline",
				lockdriver.HashKey(op.Key), op.Kind, op.Worker, over.Round(time.Millisecond))})
		}
	}
	for _, d := range dos {
		if d.DeadlineNs == 0 {
			continue
		}
		bound := d.DeadlineNs
		if d.FnReturnNs != 0 {
			bound = max(bound, d.FnReturnNs+int64(d.ReleaseTimeout))
		}
		over := time.Duration(d.ReturnNs - bound)
		maxOver = max(maxOver, over)
		if over > DeadlineGrace {
			what := "its context's deadline"
			if d.FnReturnNs != 0 {
				what = "its deadline (or fn's return plus the release timeout)"
			}
			vs = append(vs, Violation{KindOverran, fmt.Sprintf("key %s: lock.Do (worker %d) returned %v after %s",
				lockdriver.HashKey(d.Key), d.Worker, over.Round(time.Millisecond), what)})
		}
	}
	return vs, maxOver
}
