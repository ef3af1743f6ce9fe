package chaos

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// handFake is a slotFake with a queue of one waiter: a Release hands the
// freed slot to it and tells it on its Granted channel.
type handFake struct {
	*slotFake
	mu     sync.Mutex
	waiter *handWaiter
}

func (f *handFake) Join(key, id string, n int, ttl, _ time.Duration) (lock.Waiter, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waiter = &handWaiter{f: f, key: key, id: id, n: n, ttl: ttl, granted: make(chan lock.Lease, 1)}
	return f.waiter, nil
}

func (f *handFake) Release(ctx context.Context, id string) error {
	if err := f.slotFake.Release(ctx, id); err != nil {
		return err
	}
	f.mu.Lock()
	w := f.waiter
	f.waiter = nil
	f.mu.Unlock()
	if w != nil {
		l, err := f.slotFake.AcquireSlot(ctx, w.key, w.id, w.n, w.ttl)
		if err != nil {
			panic(err)
		}
		w.granted <- l
	}
	return nil
}

type handWaiter struct {
	f       *handFake
	key, id string
	n       int
	ttl     time.Duration
	granted chan lock.Lease
}

func (w *handWaiter) Attempt(ctx context.Context) (lock.Lease, error) {
	return w.f.slotFake.AcquireSlot(ctx, w.key, w.id, w.n, w.ttl)
}
func (w *handWaiter) Granted() <-chan lock.Lease { return w.granted }
func (w *handWaiter) Leave(bool)                 {}

// TestRecordHandOff takes a slot through lock.Acquire that a release hands
// over while the caller waits: the hook records it (lock.OpGranted) as an
// Acquire of a slot of the wait's limit, from the start of the wait.
func TestRecordHandOff(t *testing.T) {
	ctx := context.Background()
	const ttl = 5 * time.Second
	fake := &handFake{slotFake: &slotFake{grants: 2, slots: map[string]slotLease{}}}
	h := NewHistory()
	r := func(w int) lock.IDBackend { return h.Backend(fake, w).(lock.IDBackend) }
	for w, id := range []string{"b", "c"} {
		if _, err := r(w+1).AcquireSlot(ctx, "s", id, 2, ttl); err != nil {
			t.Fatal(err)
		}
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		// Once the waiter's first attempt found both slots taken (the
		// next one is a second away: lockdriver.QueuedPollInterval).
		for h.count(Acquire, Busy) == 0 {
			time.Sleep(time.Millisecond)
		}
		if err := r(1).Release(ctx, "b"); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now().UnixNano()
	l, err := lock.Acquire(ctx, r(0), "s", lock.WithLimit(2), lock.WithTTL(ttl), lock.WithWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if l.Fence != "000000000000003" {
		t.Fatalf("Acquire: fence %s, want 3 (the hand-off)", l.Fence)
	}
	// The waiter can get the hand-off before the release that made it has
	// returned, and a call is recorded when it returns: the history is
	// whole once the release is.
	<-released
	if got := h.count(Acquire, Busy); got != 1 {
		t.Errorf("recorded %d busy attempts, want 1: the hand-off came before a second", got)
	}
	var got *Grant
	for _, g := range h.Grants() {
		if g.Fence == l.Fence {
			got = &g
		}
	}
	switch {
	case got == nil:
		t.Fatalf("the hand-off is not a grant: %+v", h.Grants())
	case got.Worker != 0 || got.Limit != 2:
		t.Errorf("grant: worker %d, limit %d; want 0, 2", got.Worker, got.Limit)
	case got.CallNs < start || got.CallNs > h.firstCall(Acquire, Busy):
		t.Errorf("grant called at %d, want from the wait's start (%d) to its first attempt (%d)", got.CallNs, start, h.firstCall(Acquire, Busy))
	}
	if h.count(Acquire, OK) != 3 {
		t.Errorf("recorded %d successful acquires, want 3: %+v", h.count(Acquire, OK), h.Ops())
	}
	checkRecorded(t, h)
}

// count is the number of recorded calls of kind with outcome out.
func (h *History) count(kind Kind, out Outcome) int {
	n := 0
	for _, op := range h.Ops() {
		if op.Kind == kind && op.Outcome == out {
			n++
		}
	}
	return n
}

// firstCall is the call time of the first recorded call of kind with
// outcome out (0: none).
func (h *History) firstCall(kind Kind, out Outcome) int64 {
	for _, op := range h.Ops() {
		if op.Kind == kind && op.Outcome == out {
			return op.CallNs
		}
	}
	return 0
}

// markFake is a slotFake that is a lock.Recorder too; nothing is ever
// done and no record is kept.
type markFake struct{ *slotFake }

var _ interface {
	lock.IDBackend
	lock.Recorder
} = markFake{}

func (f markFake) ReleaseDone(ctx context.Context, l lock.Lease, _ time.Duration) error {
	return f.Release(ctx, l.ID)
}

func (f markFake) IsDone(context.Context, string) (bool, error) { return false, nil }

func (f markFake) ReleaseRecord(ctx context.Context, l lock.Lease, _ []byte, _ time.Duration) error {
	return f.Release(ctx, l.ID)
}

func (f markFake) Record(context.Context, string) ([]byte, bool, error) {
	return nil, false, errors.New("fake: connection reset")
}

func (f markFake) AcquireDone(ctx context.Context, key string, ttl time.Duration) (lock.Lease, bool, error) {
	l, err := f.Acquire(ctx, key, ttl)
	return l, false, err
}

func (f markFake) AcquireRecord(context.Context, string, time.Duration) (lock.Lease, []byte, error) {
	return lock.Lease{}, []byte{}, nil
}

// TestRecordOps checks the entry each operation of a wrapped backend
// leaves in the history.
func TestRecordOps(t *testing.T) {
	ctx := context.Background()
	const ttl = 5 * time.Second
	h := NewHistory()
	b := h.Backend(markFake{&slotFake{grants: 2, slots: map[string]slotLease{}}}, 7)
	ib, rec := b.(lock.IDBackend), b.(lock.Recorder)
	a, err := ib.AcquireSlot(ctx, "s", "a", 2, ttl)
	if err != nil {
		t.Fatal(err)
	}
	res := ib.ExtendBatch(ctx, []lock.Lease{{ID: "a", TTL: ttl}, {ID: "nobody's", TTL: ttl}})
	if len(res) != 2 || res[0].Err != nil || !errors.Is(res[1].Err, lock.ErrNotHeld) {
		t.Fatalf("ExtendBatch = %+v, want ok and not held", res)
	}
	if _, err := rec.IsDone(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := rec.Record(ctx, "s"); err == nil {
		t.Fatal("Record: no error, want the fake's")
	}
	if err := rec.ReleaseDone(ctx, a, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, a.ID); !errors.Is(err, lock.ErrNotHeld) {
		t.Fatalf("Release after ReleaseDone: %v, want not held", err)
	}

	type entry struct {
		kind    Kind
		outcome Outcome
	}
	want := []entry{{Acquire, OK}, {Extend, OK}, {Lookup, OK}, {Lookup, Ambiguous}, {Release, OK}, {Release, NotHeld}}
	ops := h.Ops()
	if len(ops) != len(want) {
		t.Fatalf("recorded %d calls, want %d: %+v", len(ops), len(want), ops)
	}
	for i, op := range ops {
		if got := (entry{op.Kind, op.Outcome}); got != want[i] || op.Key != "s" || op.Worker != 7 {
			t.Errorf("call %d: %v %v on %q by %d, want %v %v on s by 7", i, op.Kind, op.Outcome, op.Key, op.Worker, want[i].kind, want[i].outcome)
		}
	}
	if gs := h.Grants(); len(gs) != 1 || gs[0].Limit != 2 || !gs[0].Released || gs[0].ReleaseCallNs == 0 {
		t.Errorf("grants: %+v, want one slot of 2, released", gs)
	}
	if _, unknown := h.OrphanReleases(); unknown != 1 {
		t.Errorf("extends of unknown ids: %d, want 1 (the batch's)", unknown)
	}
	if got := h.Errors(); got["lookup: other"] != 1 || len(got) != 1 {
		t.Errorf("Errors() = %v, want one failed lookup", got)
	}
}
