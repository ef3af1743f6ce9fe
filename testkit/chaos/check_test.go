package chaos

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/syncguard-go/syncguard/lock"
)

// These tests feed the checkers hand-made histories, so a run that reports
// 0 violations is known to come from checkers that can find some.

const ms = int64(time.Millisecond)

func fence(s string) lock.Fence { return lock.Fence(s) }

func TestCheckFenceOrder(t *testing.T) {
	ok := []Grant{
		{Key: "k", Fence: "000000000000001", AcquiredMs: 100},
		{Key: "k", Fence: "000000000000002", AcquiredMs: 200},
		{Key: "j", Fence: "000000000000001", AcquiredMs: 150},
	}
	if vs := CheckFenceOrder(ok); len(vs) != 0 {
		t.Errorf("CheckFenceOrder(ordered) = %v, want none", vs)
	}
	bad := []Grant{
		{Key: "k", Fence: "000000000000002", AcquiredMs: 100},
		{Key: "k", Fence: "000000000000001", AcquiredMs: 200}, // e.g. a counter lost in a restart
		{Key: "k", Fence: "000000000000001", AcquiredMs: 300},
	}
	if vs := CheckFenceOrder(bad); len(vs) != 2 {
		t.Errorf("CheckFenceOrder(regressing, duplicate) = %v, want 2 violations (one duplicate, one regression)", vs)
	}
}

func TestCheckOverlap(t *testing.T) {
	ok := []Grant{
		{Key: "k", Fence: "000000000000001", AcquiredMs: 100, ExpiresMs: 600},
		{Key: "k", Fence: "000000000000002", AcquiredMs: 600, ExpiresMs: 1100},
	}
	vs, _ := CheckOverlap(ok)
	if len(vs) != 0 {
		t.Errorf("CheckOverlap(back to back) = %v, want none", vs)
	}
	bad := []Grant{
		{Key: "k", Fence: "000000000000001", AcquiredMs: 100, ExpiresMs: 600},
		{Key: "k", Fence: "000000000000002", AcquiredMs: 400, ExpiresMs: 900},
	}
	vs, over := CheckOverlap(bad)
	if len(vs) != 1 || over != 200*time.Millisecond {
		t.Errorf("CheckOverlap(overlapping) = %v, %v; want 1 violation, 200ms", vs, over)
	}
	released := []Grant{
		{Key: "k", Fence: "000000000000001", AcquiredMs: 100, ExpiresMs: 600, ReleaseCallNs: 300 * ms},
		{Key: "k", Fence: "000000000000002", AcquiredMs: 300, ExpiresMs: 800},
	}
	if vs, _ := CheckOverlap(released); len(vs) != 0 {
		t.Errorf("CheckOverlap(after a release) = %v, want none", vs)
	}
}

func TestCheckRegister(t *testing.T) {
	log := []Write{
		{Key: "k", Fence: "000000000000002", Accepted: true},
		{Key: "k", Fence: "000000000000001", Accepted: false},
		{Key: "k", Fence: "000000000000002", Accepted: true},
		{Key: "k", Fence: "000000000000001", Accepted: true},  // stale, accepted
		{Key: "k", Fence: "000000000000003", Accepted: false}, // current, rejected
	}
	vs, stale := CheckRegister(log)
	if len(vs) != 2 || stale != 2 {
		t.Errorf("CheckRegister = %v, stale %d; want 2 violations, 2 stale", vs, stale)
	}
	r := NewRegister()
	for _, w := range log[:3] {
		if got := r.Write(w.Key, w.Fence, 0, false); got != w.Accepted {
			t.Errorf("Register.Write(%s) = %v, want %v", w.Fence, got, w.Accepted)
		}
	}
}

func TestCheckLinearizable(t *testing.T) {
	f1, f2 := "000000000000001", "000000000000002"
	grants := []Grant{
		{Key: "k", Fence: "000000000000001", Worker: 0, CallNs: 0, ReturnNs: 10 * ms, ExpiresMs: 500},
		{Key: "k", Fence: "000000000000002", Worker: 1, CallNs: 20 * ms, ReturnNs: 30 * ms, ExpiresMs: 600},
	}
	acq := func(f string, call, ret int64) Op {
		return Op{Kind: Acquire, Key: "k", Fence: fence(f), CallNs: call * ms, ReturnNs: ret * ms}
	}
	tests := []struct {
		desc string
		ops  []Op
		want porcupine.CheckResult
	}{
		{"released before the next grant", []Op{
			acq(f1, 0, 10),
			{Kind: Release, Key: "k", Fence: fence(f1), CallNs: 12 * ms, ReturnNs: 15 * ms},
			acq(f2, 20, 30),
		}, porcupine.Ok},
		{"granted while the first lease was live", []Op{
			acq(f1, 0, 10),
			acq(f2, 20, 30),
		}, porcupine.Illegal},
		{"extended after the key was granted again", []Op{
			acq(f1, 0, 10),
			{Kind: Release, Key: "k", Fence: fence(f1), CallNs: 12 * ms, ReturnNs: 15 * ms, Outcome: Ambiguous},
			acq(f2, 20, 30),
			{Kind: Extend, Key: "k", Fence: fence(f1), CallNs: 40 * ms, ReturnNs: 45 * ms},
		}, porcupine.Illegal},
		{"a failed release may have freed the key", []Op{
			acq(f1, 0, 10),
			{Kind: Release, Key: "k", Fence: fence(f1), CallNs: 12 * ms, ReturnNs: 15 * ms, Outcome: Ambiguous},
			acq(f2, 20, 30),
		}, porcupine.Ok},
	}
	for _, tt := range tests {
		if got := CheckLinearizable(tt.ops, grants, 10*time.Second).Result; got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.desc, got, tt.want)
		}
	}
	// An expired lease frees the key for the next grant.
	expired := []Grant{grants[0], grants[1]}
	expired[0].ExpiresMs = 15
	ops := []Op{acq(f1, 0, 10), acq(f2, 20, 30)}
	if got := CheckLinearizable(ops, expired, 10*time.Second).Result; got != porcupine.Ok {
		t.Errorf("grant after expiry: got %v, want Ok", got)
	}
}

func TestCheckFalseLeaseLost(t *testing.T) {
	f1 := fence("000000000000001")
	grant := Op{Kind: Acquire, Key: "k", Fence: f1, CallNs: 0, ReturnNs: 10 * ms, ExpiresMs: 500}
	tests := []struct {
		desc string
		ops  []Op
		want int
	}{
		{"not held after the expiry", []Op{grant,
			{Kind: Release, Key: "k", Fence: f1, CallNs: 600 * ms, ReturnNs: 610 * ms, Outcome: NotHeld},
		}, 0},
		{"not held while live (a re-sent release)", []Op{grant,
			{Kind: Release, Key: "k", Fence: f1, CallNs: 100 * ms, ReturnNs: 110 * ms, Outcome: NotHeld},
		}, 1},
		{"extend not held while live", []Op{grant,
			{Kind: Extend, Key: "k", Fence: f1, CallNs: 100 * ms, ReturnNs: 110 * ms, Outcome: NotHeld},
		}, 1},
		{"not held while live by an extension", []Op{grant,
			{Kind: Extend, Key: "k", Fence: f1, CallNs: 400 * ms, ReturnNs: 410 * ms, Outcome: OK, ExpiresMs: 900},
			{Kind: Release, Key: "k", Fence: f1, CallNs: 700 * ms, ReturnNs: 710 * ms, Outcome: NotHeld},
		}, 1},
		{"an extension still in flight is no fact yet", []Op{grant,
			{Kind: Extend, Key: "k", Fence: f1, CallNs: 400 * ms, ReturnNs: 720 * ms, Outcome: OK, ExpiresMs: 900},
			{Kind: Release, Key: "k", Fence: f1, CallNs: 700 * ms, ReturnNs: 710 * ms, Outcome: NotHeld},
		}, 0},
		{"an earlier failed release may have freed it", []Op{grant,
			{Kind: Release, Key: "k", Fence: f1, CallNs: 100 * ms, ReturnNs: 110 * ms, Outcome: Ambiguous},
			{Kind: Release, Key: "k", Fence: f1, CallNs: 120 * ms, ReturnNs: 130 * ms, Outcome: NotHeld},
		}, 0},
		{"a failed release is never a violation by itself", []Op{grant,
			{Kind: Release, Key: "k", Fence: f1, CallNs: 100 * ms, ReturnNs: 110 * ms, Outcome: Ambiguous},
		}, 0},
	}
	for _, tt := range tests {
		if got := CheckFalseLeaseLost(tt.ops); len(got) != tt.want {
			t.Errorf("%s: got %v, want %d violations", tt.desc, got, tt.want)
		}
	}
}

func TestCheckDeadlines(t *testing.T) {
	ops := []Op{
		{Kind: Acquire, Key: "k", CallNs: 0, ReturnNs: 1200 * ms, DeadlineNs: 1000 * ms}, // 200 ms late: within the grace
		{Kind: Extend, Key: "k", CallNs: 0, ReturnNs: 1600 * ms, DeadlineNs: 1000 * ms},  // 600 ms late
		{Kind: Release, Key: "k", CallNs: 2000 * ms, ReturnNs: 2100 * ms, DeadlineNs: 1}, // called after its deadline, returned at once
		{Kind: Release, Key: "k", CallNs: 0, ReturnNs: 9000 * ms},                        // no deadline
	}
	dos := []DoCall{
		{Key: "k", CallNs: 0, ReturnNs: 2000 * ms, DeadlineNs: 1000 * ms},                                                     // acquisition overran by 1 s
		{Key: "k", CallNs: 0, ReturnNs: 3400 * ms, DeadlineNs: 1000 * ms, FnReturnNs: 3000 * ms, ReleaseTimeout: time.Second}, // fn ran late, Do is on time
		{Key: "k", CallNs: 0, ReturnNs: 1900 * ms, DeadlineNs: 1000 * ms, FnReturnNs: 500 * ms, ReleaseTimeout: 500 * time.Millisecond},
	}
	vs, over := CheckDeadlines(ops, dos)
	if len(vs) != 3 || over != time.Second {
		t.Errorf("CheckDeadlines = %v, %v; want 3 violations (extend, two Do), 1s", vs, over)
	}
	for _, v := range vs {
		if v.Check != KindOverran {
			t.Errorf("violation kind %q, want %q", v.Check, KindOverran)
		}
	}
}

// TestCheckTerms: a term fn ran that the history has no grant of, and a
// candidate's term whose fence is not above its previous term's, are
// violations; terms are counted by how they ended.
func TestCheckTerms(t *testing.T) {
	grants := []Grant{
		{Key: ElectionKey, Fence: "000000000000001"},
		{Key: ElectionKey, Fence: "000000000000002"},
		{Key: ElectionKey, Fence: "000000000000003"},
	}
	ok := []Term{
		{Candidate: 0, Fence: "000000000000001", End: termResigned},
		{Candidate: 1, Fence: "000000000000002", End: termLost},
		{Candidate: 0, Fence: "000000000000003", End: termLost},
	}
	ends := map[string]int{}
	if vs := checkTerms(ok, grants, ends); len(vs) != 0 || ends[termLost] != 2 || ends[termResigned] != 1 {
		t.Errorf("checkTerms(ok) = %v, ends %v; want none, 2 lost, 1 resigned", vs, ends)
	}
	bad := []Term{
		{Candidate: 0, Fence: "000000000000003"},
		{Candidate: 0, Fence: "000000000000002"}, // below its own earlier term
		{Candidate: 1, Fence: "000000000000004"}, // not in the history
	}
	vs := checkTerms(bad, grants, map[string]int{})
	if len(vs) != 2 || vs[0].Check != KindFenceOrder || vs[1].Check != KindTermUnrecorded {
		t.Errorf("checkTerms(bad) = %v, want a fence-order violation, then an unrecorded term", vs)
	}
}

// TestCheckTermOverlap: terms checked by their server-side intervals (a
// term ends at its last confirmed expiry, or at fn's return if earlier)
// and fences in grant order.
func TestCheckTermOverlap(t *testing.T) {
	term := func(c int, f string, acq, confirmed, fnEndMs int64) Term {
		return Term{Candidate: c, Fence: fence(f), AcquiredMs: acq, ConfirmedMs: confirmed, EndNs: fnEndMs * ms}
	}
	ok := []Term{
		term(1, "000000000000002", 600, 1200, 5000), // the first ended at 500 (fn returned, then released)
		term(0, "000000000000001", 100, 900, 500),
		term(2, "000000000000003", 1200, 1700, 1300), // after the last confirmed expiry of a stalled leader
	}
	if vs, over := CheckTermOverlap(ok); len(vs) != 0 || over != 0 {
		t.Errorf("CheckTermOverlap(ok) = %v, %v; want none", vs, over)
	}
	overlap := []Term{
		term(0, "000000000000001", 100, 900, 2000),
		term(1, "000000000000002", 800, 1300, 2000), // 100 ms before the first's confirmed expiry
	}
	if vs, over := CheckTermOverlap(overlap); len(vs) != 1 || vs[0].Check != KindOverlap || over != 100*time.Millisecond {
		t.Errorf("CheckTermOverlap(overlap) = %v, %v; want one overlap of 100ms", vs, over)
	}
	regress := []Term{
		term(0, "000000000000002", 100, 200, 200),
		term(1, "000000000000001", 300, 400, 400), // a lower fence granted later
	}
	if vs, _ := CheckTermOverlap(regress); len(vs) != 1 || vs[0].Check != KindFenceOrder {
		t.Errorf("CheckTermOverlap(regress) = %v, want one fence-order violation", vs)
	}
}
