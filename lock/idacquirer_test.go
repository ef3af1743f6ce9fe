package lock_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// idFake is a fakeBackend that is a lock.IDAcquirer. lose, when set, is
// asked after every AcquireID that ran: true loses its reply (the caller
// gets a NetworkTimeout although the lock may have been taken).
type idFake struct {
	*fakeBackend
	lose   func() bool
	hookID func(id string) error // a non-nil result fails the attempt, nothing taken
	calls  atomic.Int32
	ids    chan string // every id AcquireID was called with
}

var _ lock.IDAcquirer = (*idFake)(nil)

func newIDFake(lose func() bool) *idFake {
	return &idFake{fakeBackend: newFake(), lose: lose, ids: make(chan string, 1000)}
}

func (f *idFake) NewLockID(key string) (string, error) {
	if _, err := lock.NormalizeKey(key); err != nil {
		return "", err
	}
	return lock.NewLockID(), nil
}

func (f *idFake) AcquireID(ctx context.Context, key, id string, ttl time.Duration) (lock.Lease, error) {
	f.calls.Add(1)
	f.ids <- id
	if f.hookID != nil {
		if err := f.hookID(id); err != nil {
			return lock.Lease{}, err
		}
	}
	if err := f.enter(ctx, "Acquire"); err != nil {
		return lock.Lease{}, err
	}
	l, err := f.acquire(key, id, ttl)
	if f.lose != nil && f.lose() {
		return lock.Lease{}, &lock.Error{Code: lock.CodeNetworkTimeout, Op: "acquire", Msg: "reply lost"}
	}
	return l, err
}

func fastRetries() []lock.Option {
	return []lock.Option{lock.WithBaseDelay(time.Millisecond), lock.WithWait(time.Second)}
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
	_, err := lock.Acquire(context.Background(), b, "k", lock.WithBaseDelay(time.Millisecond),
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
	_, err := lock.Acquire(context.Background(), b, "k", lock.WithBaseDelay(time.Millisecond),
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

// unsupportedIDs is an IDAcquirer that cannot take ids (a decorator over a
// backend that is not one): lock.Acquire falls back to Backend.Acquire.
type unsupportedIDs struct{ *fakeBackend }

func (unsupportedIDs) NewLockID(string) (string, error) {
	return "", fmt.Errorf("no ids here: %w", errors.ErrUnsupported)
}

func (unsupportedIDs) AcquireID(context.Context, string, string, time.Duration) (lock.Lease, error) {
	panic("AcquireID called after NewLockID reported ErrUnsupported")
}

func TestAcquireIDUnsupportedFallsBack(t *testing.T) {
	b := unsupportedIDs{newFake()}
	if _, err := lock.Acquire(context.Background(), b, "k"); err != nil {
		t.Fatal(err)
	}
	if b.count("Acquire") != 1 {
		t.Errorf("Acquire calls = %d, want 1", b.count("Acquire"))
	}
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
			return &lock.NotHeldError{Reason: lock.NotHeldNotFound}
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
