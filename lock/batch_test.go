package lock_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"go.uber.org/goleak"
)

// batchFake is an idFake (a lock.IDBackend, so Keep extends its leases in
// batches) seen through a hook that records the leases Keep reports lost
// (lock.OpLeaseLost). The tests give Keep and Do b, the hooked backend.
type batchFake struct {
	*idFake
	b lock.Backend

	lostMu sync.Mutex
	lost   []lock.Lease
}

func newBatchFake() *batchFake {
	f := &batchFake{idFake: newIDFake(nil)}
	f.b = lock.WithHooks(f.idFake, hookFunc(func(next lock.OpFunc) lock.OpFunc {
		return func(ctx context.Context, op *lock.Op) error {
			if op.Kind == lock.OpLeaseLost {
				f.lostMu.Lock()
				f.lost = append(f.lost, op.Lease)
				f.lostMu.Unlock()
			}
			return next(ctx, op)
		}
	}))
	return f
}

// observedLost returns the leases the hook saw lost.
func (f *batchFake) observedLost() []lock.Lease {
	f.lostMu.Lock()
	defer f.lostMu.Unlock()
	return append([]lock.Lease(nil), f.lost...)
}

// kept is one lease under Keep.
type kept struct {
	l    lock.Lease
	held context.Context
	stop func() error
	exts *counter
}

// keepMany acquires n leases "k0".."k<n-1>" on f and keeps them alive
// with heartbeat hb, counting each lease's extensions.
func keepMany(t *testing.T, f *batchFake, n int, ttl time.Duration, hb lock.Heartbeat) []kept {
	t.Helper()
	ks := make([]kept, n)
	for i := range ks {
		l := lease(t, f.fakeBackend, fmt.Sprintf("k%d", i), ttl)
		c := &counter{}
		hb.OnExtend = func(time.Time) { c.inc() }
		held, stop := lock.Keep(context.Background(), f.b, l, lock.WithHeartbeat(hb))
		ks[i] = kept{l: l, held: held, stop: stop, exts: c}
	}
	t.Cleanup(func() {
		for _, k := range ks {
			k.stop()
		}
	})
	return ks
}

func TestKeepBatchedExtendsInFewBatches(t *testing.T) {
	const n, ttl = 200, 300 * time.Millisecond
	base := goleak.IgnoreCurrent()
	baseline := runtime.NumGoroutine()
	f := newBatchFake()
	ks := keepMany(t, f, n, ttl, lock.Heartbeat{})
	time.Sleep(time.Second) // > 3 TTLs: every lease must have been extended
	batches, extends := f.batchCount(), f.count("Extend")
	t.Logf("%d leases, %v: %d extends in %d batches", n, time.Second, extends, batches)
	for i, k := range ks {
		if k.held.Err() != nil {
			t.Fatalf("lease %d lost: %v", i, context.Cause(k.held))
		}
		if !f.held(k.l.Key) {
			t.Fatalf("lease %d gone from the backend", i)
		}
		if k.exts.get() < 3 {
			t.Errorf("lease %d: %d extensions, want >= 3", i, k.exts.get())
		}
	}
	if extends < 3*n {
		t.Errorf("extends = %d, want >= %d", extends, 3*n)
	}
	if batches*20 > extends {
		t.Errorf("batches = %d for %d extends, want far fewer (<= 1/20)", batches, extends)
	}
	if g := runtime.NumGoroutine() - baseline; g > 3 {
		t.Errorf("goroutines added = %d for %d kept leases, want the one scheduler", g, n)
	}
	for _, k := range ks {
		if err := k.stop(); err != nil {
			t.Errorf("stop() = %v, want nil", err)
		}
		if cause := context.Cause(k.held); k.held.Err() == nil || errors.Is(cause, lock.ErrLeaseLost) {
			t.Errorf("after stop: held.Err() = %v, cause %v; want cancelled, not ErrLeaseLost", k.held.Err(), cause)
		}
	}
	// The scheduler goroutine exits once no lease is left.
	noLeak(t, base)
	if got := f.observedLost(); len(got) != 0 {
		t.Errorf("OpLeaseLost seen %d times, want 0", len(got))
	}
}

func TestKeepBatchedLossIsPerLease(t *testing.T) {
	const n, ttl = 50, 300 * time.Millisecond
	f := newBatchFake()
	ks := keepMany(t, f, n, ttl, lock.Heartbeat{})
	victim := ks[7]
	f.steal(victim.l.Key)
	waitDone(t, victim.held, 3*time.Second, "the stolen lease's held")
	cause := context.Cause(victim.held)
	if !errors.Is(cause, lock.ErrLeaseLost) || !errors.Is(cause, lock.ErrNotHeld) {
		t.Errorf("context.Cause(held) = %v, want ErrLeaseLost wrapping ErrNotHeld", cause)
	}
	time.Sleep(ttl) // the others go on being extended
	for i, k := range ks {
		if i != 7 && k.held.Err() != nil {
			t.Errorf("lease %d cancelled (%v), want only lease 7", i, context.Cause(k.held))
		}
	}
	if got := f.observedLost(); len(got) != 1 || got[0].ID != victim.l.ID {
		t.Errorf("OpLeaseLost leases = %v, want exactly the stolen one", got)
	}
	err := victim.stop()
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Errorf("stop() = %v, want ErrLeaseLost", err)
	}
	if again := victim.stop(); again != err {
		t.Errorf("second stop() = %v, want the same %v", again, err)
	}
}

func TestKeepBatchedStopRemoves(t *testing.T) {
	const n, ttl = 100, 300 * time.Millisecond
	f := newBatchFake()
	ks := keepMany(t, f, n, ttl, lock.Heartbeat{})
	time.Sleep(ttl / 2)
	stopped := map[int]int{}
	for i := 0; i < n; i += 2 {
		if err := ks[i].stop(); err != nil {
			t.Fatalf("stop(%d) = %v", i, err)
		}
		stopped[i] = ks[i].exts.get()
	}
	time.Sleep(2 * ttl)
	for i, k := range ks {
		if before, ok := stopped[i]; ok {
			if got := k.exts.get(); got != before {
				t.Errorf("lease %d extended %d times after stop", i, got-before)
			}
			continue
		}
		if k.held.Err() != nil || !f.held(k.l.Key) {
			t.Errorf("lease %d lost (%v), want kept", i, context.Cause(k.held))
		}
	}
	// Stopped leases expire on the backend, not extended any more.
	time.Sleep(ttl)
	for i := range stopped {
		if f.held(ks[i].l.Key) {
			t.Errorf("stopped lease %d still held on the backend", i)
		}
	}
}

func TestKeepBatchedRetriesThenLoses(t *testing.T) {
	const ttl = 300 * time.Millisecond
	base := goleak.IgnoreCurrent()
	f := newBatchFake()
	var mu sync.Mutex
	failures := 2
	f.setBatchHook(func([]lock.Lease) error {
		mu.Lock()
		defer mu.Unlock()
		if failures > 0 {
			failures--
			return &lock.Error{Code: lock.CodeNetworkTimeout, Op: "extend"}
		}
		return nil
	})
	var errs counter
	ks := keepMany(t, f, 20, ttl, lock.Heartbeat{OnError: func(error) { errs.inc() }})
	// Transient failures are retried: the leases survive.
	waitFor(t, 5*time.Second, func() bool { return ks[0].exts.get() >= 2 }, "two successful extensions")
	if errs.get() < 2 {
		t.Errorf("Heartbeat.OnError calls = %d, want >= 2", errs.get())
	}
	for i, k := range ks {
		if k.held.Err() != nil {
			t.Fatalf("lease %d lost (%v) after transient errors", i, context.Cause(k.held))
		}
	}
	// Failing for good: every lease is lost at its deadline, not before.
	f.setBatchHook(func([]lock.Lease) error {
		return &lock.Error{Code: lock.CodeServiceUnavailable, Op: "extend"}
	})
	start := time.Now()
	for i, k := range ks {
		waitDone(t, k.held, 5*time.Second, fmt.Sprintf("lease %d's held", i))
		cause := context.Cause(k.held)
		if !errors.Is(cause, lock.ErrLeaseLost) || errors.Is(cause, lock.ErrNotHeld) {
			t.Errorf("lease %d: cause %v, want ErrLeaseLost (expired)", i, cause)
		}
		if err := k.stop(); !errors.Is(err, lock.ErrLeaseLost) {
			t.Errorf("lease %d: stop() = %v, want ErrLeaseLost", i, err)
		}
	}
	// The last success was at most an interval (ttl/3) before the switch.
	if elapsed := time.Since(start); elapsed < ttl-ttl/3-50*time.Millisecond {
		t.Errorf("leases lost %v after the failures began, want about a TTL after the last success", elapsed)
	}
	if got := len(f.observedLost()); got != len(ks) {
		t.Errorf("OpLeaseLost seen %d times, want %d", got, len(ks))
	}
	noLeak(t, base)
}

func TestKeepBatchedCallerCancelled(t *testing.T) {
	base := goleak.IgnoreCurrent()
	f := newBatchFake()
	other := keepMany(t, f, 1, 300*time.Millisecond, lock.Heartbeat{})[0]
	l := lease(t, f.fakeBackend, "mine", 300*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	var exts counter
	held, stop := lock.Keep(ctx, f.b, l, lock.WithHeartbeat(lock.Heartbeat{OnExtend: func(time.Time) { exts.inc() }}))
	waitFor(t, 3*time.Second, func() bool { return exts.get() >= 1 }, "an extension")
	cancel()
	waitDone(t, held, time.Second, "held")
	if cause := context.Cause(held); !errors.Is(cause, context.Canceled) || errors.Is(cause, lock.ErrLeaseLost) {
		t.Errorf("context.Cause(held) = %v, want context.Canceled", cause)
	}
	n := exts.get()
	time.Sleep(400 * time.Millisecond)
	if got := exts.get(); got != n {
		t.Errorf("%d extensions after the caller's ctx ended, want 0", got-n)
	}
	if f.held("mine") {
		t.Errorf("lease still held on the backend: the heartbeat went on")
	}
	if err := stop(); err != nil {
		t.Errorf("stop() = %v, want nil (the lease was not lost)", err)
	}
	if len(f.observedLost()) != 0 {
		t.Errorf("OpLeaseLost seen for a cancelled lease")
	}
	if other.held.Err() != nil {
		t.Errorf("the other lease was cancelled: %v", context.Cause(other.held))
	}
	other.stop()
	noLeak(t, base)
}

// TestKeepBatchedStopDuringSlowBatch: stop does not wait for an in-flight
// batch, and no callback runs after stop returns.
func TestKeepBatchedStopDuringSlowBatch(t *testing.T) {
	base := goleak.IgnoreCurrent()
	f := newBatchFake()
	entered := make(chan struct{}, 1)
	f.setBatchHook(func([]lock.Lease) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		time.Sleep(200 * time.Millisecond)
		return nil
	})
	ks := keepMany(t, f, 5, 600*time.Millisecond, lock.Heartbeat{})
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no batch was sent")
	}
	start := time.Now()
	for _, k := range ks {
		if err := k.stop(); err != nil {
			t.Errorf("stop() = %v", err)
		}
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("stop took %v during an in-flight batch, want it not to wait", d)
	}
	counts := make([]int, len(ks))
	for i, k := range ks {
		counts[i] = k.exts.get()
	}
	time.Sleep(300 * time.Millisecond)
	for i, k := range ks {
		if k.exts.get() != counts[i] {
			t.Errorf("lease %d: Heartbeat.OnExtend called after stop returned", i)
		}
	}
	noLeak(t, base)
}

// TestKeepBatchedThenRestarts: the scheduler exits with its last lease and
// a later Keep on the same backend starts it again.
func TestKeepBatchedThenRestarts(t *testing.T) {
	base := goleak.IgnoreCurrent()
	f := newBatchFake()
	for round := 0; round < 3; round++ {
		k := keepMany(t, f, 3, 150*time.Millisecond, lock.Heartbeat{})
		waitFor(t, 3*time.Second, func() bool { return k[2].exts.get() >= 2 }, "extensions")
		for _, x := range k {
			if err := x.stop(); err != nil {
				t.Fatalf("round %d: stop() = %v", round, err)
			}
		}
		noLeak(t, base)
		f.steal("k0")
		f.steal("k1")
		f.steal("k2")
	}
}

// TestKeepBatchedDo: Do keeps its lease with the scheduler too.
func TestKeepBatchedDo(t *testing.T) {
	f := newBatchFake()
	err := lock.Do(context.Background(), f.b, "job", func(ctx context.Context, l lock.Lease) error {
		time.Sleep(400 * time.Millisecond)
		return ctx.Err()
	}, lock.WithTTL(150*time.Millisecond))
	if err != nil {
		t.Fatalf("Do = %v", err)
	}
	if f.batchCount() < 2 {
		t.Errorf("batches = %d, want the lease kept by the scheduler", f.batchCount())
	}
}

// TestKeepBatchedLostAtItsDeadlineDuringSlowBatch: a batch holding a lease
// with little time left and one with much is slow to answer (it may run
// until the later deadline); the first lease is declared lost at its own
// local deadline, as on the per-lease path, not when the batch returns,
// and the other is kept.
func TestKeepBatchedLostAtItsDeadlineDuringSlowBatch(t *testing.T) {
	f := newBatchFake()
	release := make(chan struct{})
	defer close(release)
	f.setBatchHook(func([]lock.Lease) error {
		<-release
		return nil
	})
	ctx := context.Background()
	short, err := f.Acquire(ctx, "short", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	long, err := f.Acquire(ctx, "long", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	short.ExpiresAt = time.Now().Add(300 * time.Millisecond) // little time left by the server's clock
	interval := lock.WithHeartbeat(lock.Heartbeat{Interval: 50 * time.Millisecond})
	heldShort, stopShort := lock.Keep(ctx, f.b, short, interval)
	defer stopShort()
	heldLong, stopLong := lock.Keep(ctx, f.b, long, interval)
	defer stopLong()
	select {
	case <-heldShort.Done():
		if !errors.Is(context.Cause(heldShort), lock.ErrLeaseLost) {
			t.Errorf("cause %v, want ErrLeaseLost", context.Cause(heldShort))
		}
	case <-time.After(1500 * time.Millisecond):
		t.Fatal("the lease with 300ms left was not declared lost while its batch hung")
	}
	if heldLong.Err() != nil {
		t.Errorf("the lease with 3s left was lost too: %v", context.Cause(heldLong))
	}
}
