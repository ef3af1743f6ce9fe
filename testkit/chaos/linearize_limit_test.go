package chaos

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// TestCheckLinearizableLimit feeds the semaphore model hand-made histories
// of a limit of 2 in which an acquisition reports a grant the server made
// before the attempt that reports it was called: correct ones must pass,
// and a third live holder must still fail. Times in ms, all from 1000 (an
// Op's FromNs of 0 means unknown).
func TestCheckLinearizableLimit(t *testing.T) {
	const key = "s"
	f := func(n int) lock.Fence { s, _ := lockdriver.FormatFence(uint64(n)); return s }
	acq := func(fn, w int, from, call, ret int64) Op {
		return Op{Kind: Acquire, Key: key, Fence: f(fn), Worker: w, CallNs: call * ms, ReturnNs: ret * ms, FromNs: from * ms}
	}
	rel := func(fn, w int, call, ret int64, out Outcome) Op {
		return Op{Kind: Release, Key: key, Fence: f(fn), Worker: w, CallNs: call * ms, ReturnNs: ret * ms, Outcome: out}
	}
	grant := func(fn, w int, expires int64) Grant {
		return Grant{Key: key, Fence: f(fn), Worker: w, Limit: 2, ExpiresMs: expires}
	}
	far := int64(10000) // no lease expires within these histories
	tests := []struct {
		desc   string
		ops    []Op
		grants []Grant
		want   porcupine.CheckResult
	}{
		{
			// Worker 0's first attempt took fence 1 but its reply was lost
			// (ambiguous, left out); go-redis or lock.Acquire sent it again
			// with the same lock id after fences 2 and 3 were granted, and
			// got fence 1 back.
			desc: "a lost reply's retry reports the earlier grant",
			ops: []Op{
				{Kind: Acquire, Key: key, Worker: 0, CallNs: 1000 * ms, ReturnNs: 1005 * ms, Outcome: Ambiguous},
				acq(2, 1, 1010, 1010, 1020),
				rel(2, 1, 1022, 1025, OK),
				acq(3, 2, 1030, 1030, 1040),
				acq(1, 0, 1000, 1050, 1060),
			},
			grants: []Grant{grant(1, 0, far), grant(2, 1, far), grant(3, 2, far)},
			want:   porcupine.Ok,
		},
		{
			// Worker 0 waits from 1100 while fences 1 and 2 hold; the
			// release of 1 hands it fence 3, whose message is slow; 2 is
			// released and worker 3 takes fence 4; then worker 0's polling
			// attempt finds fence 3 its own.
			desc: "a waiter's attempt finds a slot handed to it before the attempt",
			ops: []Op{
				acq(1, 1, 1000, 1000, 1010),
				acq(2, 2, 1020, 1020, 1030),
				rel(1, 1, 1150, 1155, OK),
				rel(2, 2, 1160, 1165, OK),
				acq(4, 3, 1170, 1170, 1175),
				acq(3, 0, 1100, 1180, 1185),
			},
			grants: []Grant{grant(1, 1, far), grant(2, 2, far), grant(3, 0, far), grant(4, 3, far)},
			want:   porcupine.Ok,
		},
		{
			// A slot expires (by the server's clock, 1200) while its
			// holder's release is in flight: the release answers not held,
			// and the slot went to the next acquisition.
			desc: "a slot expires while its release is in flight",
			ops: []Op{
				acq(1, 1, 1000, 1000, 1010),
				acq(2, 2, 1020, 1020, 1030),
				rel(1, 1, 1190, 1230, NotHeld),
				acq(3, 3, 1205, 1205, 1210),
			},
			grants: []Grant{grant(1, 1, 1200), grant(2, 2, far), grant(3, 3, far)},
			want:   porcupine.Ok,
		},
		{
			// A release whose reply was lost freed the slot (the server
			// ran it); the next grant took it.
			desc: "a release whose outcome is unknown freed the slot",
			ops: []Op{
				acq(1, 1, 1000, 1000, 1010),
				acq(2, 2, 1020, 1020, 1030),
				rel(1, 1, 1040, 1050, Ambiguous),
				acq(3, 3, 1060, 1060, 1070),
				{Kind: Extend, Key: key, Fence: f(2), Worker: 2, CallNs: 1080 * ms, ReturnNs: 1090 * ms},
			},
			grants: []Grant{grant(1, 1, far), grant(2, 2, far), grant(3, 3, far)},
			want:   porcupine.Ok,
		},
		{
			// The same as the first history, but fence 2 is never
			// released: fence 1 (granted whenever from 1000 on) is a third
			// live holder with 2 and 3.
			desc: "a retried acquisition doubles a slot",
			ops: []Op{
				acq(2, 1, 1010, 1010, 1020),
				acq(3, 2, 1030, 1030, 1040),
				acq(1, 0, 1000, 1050, 1060),
				{Kind: Extend, Key: key, Fence: f(2), Worker: 1, CallNs: 1070 * ms, ReturnNs: 1080 * ms},
				{Kind: Extend, Key: key, Fence: f(3), Worker: 2, CallNs: 1070 * ms, ReturnNs: 1080 * ms},
				{Kind: Extend, Key: key, Fence: f(1), Worker: 0, CallNs: 1070 * ms, ReturnNs: 1080 * ms},
			},
			grants: []Grant{grant(1, 0, far), grant(2, 1, far), grant(3, 2, far)},
			want:   porcupine.Illegal,
		},
		{
			// A slot handed to a waiter while two others hold and are
			// neither released nor expired.
			desc: "a hand-off doubles a slot",
			ops: []Op{
				acq(1, 1, 1000, 1000, 1010),
				acq(2, 2, 1020, 1020, 1030),
				acq(3, 0, 1005, 1180, 1185),
				{Kind: Extend, Key: key, Fence: f(1), Worker: 1, CallNs: 1190 * ms, ReturnNs: 1195 * ms},
				{Kind: Extend, Key: key, Fence: f(2), Worker: 2, CallNs: 1190 * ms, ReturnNs: 1195 * ms},
			},
			grants: []Grant{grant(1, 1, far), grant(2, 2, far), grant(3, 0, far)},
			want:   porcupine.Illegal,
		},
	}
	for _, tt := range tests {
		if got := CheckLinearizable(tt.ops, tt.grants, 10*time.Second).Result; got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.desc, got, tt.want)
		}
	}
}

// lossyFake is a slotFake that can lose the reply of an acquisition it
// granted, and hand a released slot to a waiting id (whose hand-off
// message never arrives: its next attempt finds the slot its own).
type lossyFake struct {
	*slotFake
	loseNext bool   // the next AcquireSlot grants and then fails
	handTo   string // a Release hands the freed slot to this id, once
	handTTL  time.Duration
}

var errReplyLost = errors.New("fake: connection reset (the reply was lost)")

func (f *lossyFake) AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (lock.Lease, error) {
	l, err := f.slotFake.AcquireSlot(ctx, key, id, n, ttl)
	if err == nil && f.loseNext {
		f.loseNext = false
		return lock.Lease{}, errReplyLost
	}
	return l, err
}

func (f *lossyFake) Release(ctx context.Context, id string) error {
	err := f.slotFake.Release(ctx, id)
	if err == nil && f.handTo != "" {
		to := f.handTo
		f.handTo = ""
		if _, err := f.slotFake.AcquireSlot(ctx, "s", to, 2, f.handTTL); err != nil {
			panic(err)
		}
	}
	return err
}

func (f *lossyFake) Join(key, id string, n int, ttl, _ time.Duration) (lock.Waiter, error) {
	return &fakeWaiter{f: f, key: key, id: id, n: n, ttl: ttl}, nil
}

// fakeWaiter polls: its Granted never delivers.
type fakeWaiter struct {
	f      *lossyFake
	key    string
	id     string
	n      int
	ttl    time.Duration
	silent chan lock.Lease
}

func (w *fakeWaiter) Attempt(ctx context.Context) (lock.Lease, error) {
	return w.f.AcquireSlot(ctx, w.key, w.id, w.n, w.ttl)
}
func (w *fakeWaiter) Granted() <-chan lock.Lease { return w.silent }
func (w *fakeWaiter) Leave(bool)                 {}

// TestRecordEarlierGrant records, through the recorder, the two ways an
// acquisition reports a slot granted before the attempt that reports it
// was called (a retry after a lost reply; a waiter's attempt after a
// hand-off whose message did not arrive), with later grants returning in
// between; on an honest limit of 2 the history must be linearizable.
func TestRecordEarlierGrant(t *testing.T) {
	ctx := context.Background()
	const ttl = 5 * time.Second
	step := func() { time.Sleep(2 * time.Millisecond) } // distinct client times
	t.Run("retry after a lost reply", func(t *testing.T) {
		fake := &lossyFake{slotFake: &slotFake{grants: 2, slots: map[string]slotLease{}}}
		h := NewHistory()
		r := func(w int) lock.IDBackend { return h.Backend(fake, w).(lock.IDBackend) }
		fake.loseNext = true
		if _, err := r(0).AcquireSlot(ctx, "s", "a", 2, ttl); err == nil {
			t.Fatal("the first attempt's reply was not lost")
		}
		step()
		if _, err := r(1).AcquireSlot(ctx, "s", "b", 2, ttl); err != nil {
			t.Fatal(err)
		}
		step()
		if err := r(1).Release(ctx, "b"); err != nil {
			t.Fatal(err)
		}
		step()
		if _, err := r(2).AcquireSlot(ctx, "s", "c", 2, ttl); err != nil {
			t.Fatal(err)
		}
		step()
		if l, err := r(0).AcquireSlot(ctx, "s", "a", 2, ttl); err != nil || l.Fence != "000000000000001" {
			t.Fatalf("retry: %v, %v; want fence 1 back", l.Fence, err)
		}
		checkRecorded(t, h)
	})
	t.Run("attempt after a hand-off", func(t *testing.T) {
		fake := &lossyFake{slotFake: &slotFake{grants: 2, slots: map[string]slotLease{}}, handTTL: ttl}
		h := NewHistory()
		r := func(w int) lock.IDBackend { return h.Backend(fake, w).(lock.IDBackend) }
		for w, id := range []string{"b", "c"} {
			if _, err := r(w+1).AcquireSlot(ctx, "s", id, 2, ttl); err != nil {
				t.Fatal(err)
			}
		}
		step()
		qw, err := r(0).Join("s", "a", 2, ttl, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := qw.Attempt(ctx); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("first attempt: %v, want busy", err)
		}
		fake.handTo = "a"
		step()
		if err := r(1).Release(ctx, "b"); err != nil { // hands fence 3 to a
			t.Fatal(err)
		}
		step()
		if err := r(2).Release(ctx, "c"); err != nil {
			t.Fatal(err)
		}
		step()
		if _, err := r(3).AcquireSlot(ctx, "s", "d", 2, ttl); err != nil { // fence 4
			t.Fatal(err)
		}
		step()
		if l, err := qw.Attempt(ctx); err != nil || l.Fence != "000000000000003" {
			t.Fatalf("attempt after the hand-off: %v, %v; want fence 3", l.Fence, err)
		}
		qw.Leave(true)
		checkRecorded(t, h)
	})
}

func checkRecorded(t *testing.T, h *History) {
	t.Helper()
	grants := h.Grants()
	if vs, _ := CheckLimit(grants); len(vs) != 0 {
		t.Errorf("CheckLimit = %v, want none", vs)
	}
	if lin := CheckLinearizable(h.Ops(), grants, 10*time.Second); lin.Result != porcupine.Ok {
		t.Errorf("linearizability: got %v, want ok (ops %+v)", lin.Result, h.Ops())
	}
}
