package lock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// idFake is a fakeBackend that is a lock.IDBackend. Its lock ids are the
// caller's (AcquireID); it keeps no slots and no queue: AcquireSlot and
// LookupLimit fail, and Join reports errors.ErrUnsupported, so Acquire
// polls as it does with a backend that cannot be told of hand-offs.
// ExtendBatch extends each lease with the fake's Extend (so
// count("Extend") still counts extensions) and counts the batches.
//
// lose, when set, is asked after every AcquireID that ran: true loses its
// reply (the caller gets a NetworkTimeout although the lock may have been
// taken).
type idFake struct {
	*fakeBackend
	lose   func() bool
	hookID func(id string) error // a non-nil result fails the attempt, nothing taken
	calls  atomic.Int32
	ids    chan string // the first ids AcquireID was called with

	batchMu   sync.Mutex
	batches   int
	batchHook func(reqs []lock.Lease) error // a non-nil result fails the whole batch

	locals lock.Locals
}

// Locals gives Keep a place for its scheduler, so that it batches.
func (f *idFake) Locals() *lock.Locals { return &f.locals }

var _ lock.IDBackend = (*idFake)(nil)

func newIDFake(lose func() bool) *idFake {
	return &idFake{fakeBackend: newFake(), lose: lose, ids: make(chan string, 1000)}
}

func (f *idFake) NewLockID(key string) (string, error) {
	if _, err := lockdriver.NormalizeKey(key); err != nil {
		return "", err
	}
	return lockdriver.NewLockID(), nil
}

func (f *idFake) AcquireID(ctx context.Context, key, id string, ttl time.Duration) (lock.Lease, error) {
	f.calls.Add(1)
	select {
	case f.ids <- id:
	default: // enough ids kept for the tests that read them
	}
	if f.hookID != nil {
		if err := f.hookID(id); err != nil {
			return lock.Lease{}, err
		}
	}
	if err := f.enter(ctx, "Acquire"); err != nil {
		return lock.Lease{}, err
	}
	if err := lockdriver.ValidateLockID(id); err != nil {
		return lock.Lease{}, err
	}
	l, err := f.acquire(key, id, ttl)
	if f.lose != nil && f.lose() {
		return lock.Lease{}, &lock.Error{Code: lock.CodeNetworkTimeout, Op: "acquire", Msg: "reply lost"}
	}
	return l, err
}

// errNoSlots is what the fake answers to the slot methods.
var errNoSlots = fmt.Errorf("idFake keeps no slots: %w", errors.ErrUnsupported)

func (f *idFake) AcquireSlot(context.Context, string, string, int, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, errNoSlots
}

func (f *idFake) LookupLimit(context.Context, string) (*lock.LimitInfo, error) {
	return nil, errNoSlots
}

func (f *idFake) Join(string, string, int, time.Duration, time.Duration) (lock.Waiter, error) {
	return nil, fmt.Errorf("idFake cannot hand the lock over: %w", errors.ErrUnsupported)
}

func (f *idFake) ExtendBatch(ctx context.Context, reqs []lock.Lease) []lock.ExtendResult {
	f.batchMu.Lock()
	f.batches++
	h := f.batchHook
	f.batchMu.Unlock()
	res := make([]lock.ExtendResult, len(reqs))
	if h != nil {
		if err := h(reqs); err != nil {
			for i := range res {
				res[i].Err = err
			}
			return res
		}
	}
	for i, r := range reqs {
		res[i].ExpiresAt, res[i].Err = f.fakeBackend.Extend(ctx, r.ID, r.TTL)
	}
	return res
}

func (f *idFake) setBatchHook(h func(reqs []lock.Lease) error) {
	f.batchMu.Lock()
	f.batchHook = h
	f.batchMu.Unlock()
}

func (f *idFake) batchCount() int {
	f.batchMu.Lock()
	defer f.batchMu.Unlock()
	return f.batches
}

func fastRetries() []lock.Option {
	return []lock.Option{lock.WithRetry(lock.Retry{BaseDelay: time.Millisecond}), lock.WithWait(time.Second)}
}

// TestAcquireLostReplyPickedUpBySameID: the first attempt takes the lock
// but its reply is lost; the next attempt, with the same id, gets that
// lease back instead of ErrLocked, and nothing else is left locked.
func TestAcquireLostReplyPickedUpBySameID(t *testing.T) {
	var n atomic.Int32
	b := newIDFake(func() bool { return n.Add(1) == 1 })
	l, err := lock.Acquire(context.Background(), b, "k", fastRetries()...)
	if err != nil {
		t.Fatalf("Acquire = %v, want the lease the lost reply took", err)
	}
	if l.Fence != "000000000000001" || b.calls.Load() != 2 {
		t.Errorf("fence %s after %d attempts, want fence 1 after 2 (one grant)", l.Fence, b.calls.Load())
	}
	close(b.ids)
	first := <-b.ids
	for id := range b.ids {
		if id != first {
			t.Errorf("attempts used ids %q and %q, want one id", first, id)
		}
	}
	if first != l.ID {
		t.Errorf("lease id %q, want the attempts' id %q", l.ID, first)
	}
}

// TestAcquireGiveUpReleasesUnknownOutcome: every reply is lost; Acquire
// gives up with the backend's NetworkTimeout and releases the id in the
// background, so the lock the attempts took does not stay until its TTL.
func TestAcquireGiveUpReleasesUnknownOutcome(t *testing.T) {
	b := newIDFake(func() bool { return true })
	_, err := lock.Acquire(context.Background(), b, "k", lock.WithRetry(lock.Retry{BaseDelay: time.Millisecond}),
		lock.WithWait(20*time.Millisecond), lock.WithTTL(time.Hour))
	if lock.CodeOf(err) != lock.CodeNetworkTimeout {
		t.Fatalf("Acquire = %v, want the NetworkTimeout", err)
	}
	if b.calls.Load() < 2 {
		t.Errorf("%d attempts, want the transient failure retried", b.calls.Load())
	}
	waitReleased(t, b.fakeBackend, "k", "the lock taken by the lost replies")
}

// TestAcquireOrphanReleaseOutlastsAnOutage: the release of an id whose
// outcome was unknown is tried again while the backend is unreachable
// (here its first 3 Releases fail with NetworkTimeout, as go-redis does
// once its own retries are spent during a stall), not given up after one.
func TestAcquireOrphanReleaseOutlastsAnOutage(t *testing.T) {
	b := newIDFake(func() bool { return true })
	var releases atomic.Int32
	b.setHook(func(_ context.Context, method string) error {
		if method == "Release" && releases.Add(1) <= 3 {
			return &lock.Error{Code: lock.CodeNetworkTimeout, Op: "release", Msg: "redis did not answer in time"}
		}
		return nil
	})
	_, err := lock.Acquire(context.Background(), b, "k", lock.WithRetry(lock.Retry{BaseDelay: time.Millisecond}),
		lock.WithWait(20*time.Millisecond), lock.WithTTL(time.Hour))
	if lock.CodeOf(err) != lock.CodeNetworkTimeout {
		t.Fatalf("Acquire = %v, want the NetworkTimeout", err)
	}
	waitReleased(t, b.fakeBackend, "k", "the lock taken by the lost replies")
	if n := releases.Load(); n != 4 {
		t.Errorf("%d Release calls, want 4 (3 failed, then the release)", n)
	}
}

// TestAcquireCancelledDuringAttemptReleases: an attempt cut short by the
// caller's context may have run; Acquire returns at once and releases the
// id in the background.
func TestAcquireCancelledDuringAttemptReleases(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := newIDFake(func() bool { cancel(); return true })
	_, err := lock.Acquire(ctx, b, "k", fastRetries()...)
	if !errors.Is(err, context.Canceled) && lock.CodeOf(err) != lock.CodeNetworkTimeout {
		t.Fatalf("Acquire = %v, want the attempt's error", err)
	}
	if b.calls.Load() != 1 {
		t.Errorf("%d attempts after the context ended, want 1", b.calls.Load())
	}
	waitReleased(t, b.fakeBackend, "k", "the lock taken by the abandoned attempt")
}

// TestAcquireTransientWithoutIDNotRetried: a backend that cannot take
// caller-chosen ids gets no retry on a transient failure (a retry could
// take a second lock while the first is held by a lost reply).
func TestAcquireTransientWithoutIDNotRetried(t *testing.T) {
	b := newFake()
	b.setHook(func(context.Context, string) error {
		return &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire"}
	})
	_, err := lock.Acquire(context.Background(), b, "k", fastRetries()...)
	if lock.CodeOf(err) != lock.CodeServiceUnavailable || b.count("Acquire") != 1 {
		t.Errorf("Acquire = %v after %d calls, want ServiceUnavailable after 1", err, b.count("Acquire"))
	}
}

// TestAcquireHookedCoreUsesAcquire: a backend with hooks over one without
// caller-chosen ids is not an IDBackend either, so lock.Acquire takes the
// lock with Backend.Acquire (through the hooks), as on the bare backend.
func TestAcquireHookedCoreUsesAcquire(t *testing.T) {
	f := newFake()
	var log opLog
	b := lock.WithHooks(f, &log)
	if _, ok := b.(lock.IDBackend); ok {
		t.Fatalf("WithHooks of a core Backend is a lock.IDBackend")
	}
	l, err := lock.Acquire(context.Background(), b, "k")
	if err != nil {
		t.Fatal(err)
	}
	if f.count("Acquire") != 1 {
		t.Errorf("Acquire calls = %d, want 1", f.count("Acquire"))
	}
	want := []lock.Op{
		{Kind: lock.OpWait, Key: "k", TTL: lockdriver.DefaultTTL, Lease: l},
		{Kind: lock.OpAcquire, Key: "k", TTL: lockdriver.DefaultTTL, Lease: l},
	}
	log.wantOps(t, want)
}

// waitReleased waits until key is free: the background release of an id
// whose outcome was unknown has run.
func waitReleased(t *testing.T, f *fakeBackend, key, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for f.held(key) {
		if time.Now().After(deadline) {
			t.Fatal(what + " is still held")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestAcquireRetiredIDTakesANewOne: an attempt that gives its own grant up
// (as redisbackend's ReplicaAck does when replicas do not acknowledge it)
// retires the id; the next attempt takes a new id instead of failing.
func TestAcquireRetiredIDTakesANewOne(t *testing.T) {
	b := newIDFake(nil)
	var n atomic.Int32
	b.hookID = func(id string) error {
		switch n.Add(1) {
		case 1: // took the lock, then gave it up (releasing the id)
			return &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire", Msg: "not acknowledged"}
		case 2: // the same id again: released
			return &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}
		}
		return nil
	}
	l, err := lock.Acquire(context.Background(), b, "k", fastRetries()...)
	if err != nil {
		t.Fatalf("Acquire = %v, want a lease under a new id", err)
	}
	close(b.ids)
	first := <-b.ids
	if l.ID == first || b.calls.Load() != 3 {
		t.Errorf("lease id %q after %d attempts, want a new id (not %q) at the third", l.ID, b.calls.Load(), first)
	}
}
