package locktest

import (
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// RunLimit runs the conformance suite for concurrency limits
// ([lock.WithLimit], [lock.IDBackend]) as subtests of t, like [Run] (which
// a backend with limits must pass too): newBackend returns a fresh,
// isolated backend for each subtest, and it must implement lock.IDBackend.
// The options are Run's.
//
// The suite checks: for n in {1, 3, 10}, 50 goroutines never see more
// than n holders in the critical section, through lock.Do with a wait and
// through AcquireSlot; n slots are granted and the next attempt is refused
// with a [*lock.LockedError] carrying the earliest expiry; a slot that
// lapses by the backend's clock frees its place while the others stay;
// ownership (a foreign, stale or released id frees nothing; a release
// frees exactly one slot); fences strictly increase per key in grant
// order, slots and locks alike; InvalidArgument for n outside
// [1, lockdriver.MaxLimit] and the other bad inputs of [BadLimitInputs];
// LookupLimit's count, limit and sanitised holders; [lock.ErrKindMismatch]
// both ways while a lock or a limit holds a key, and each kind working
// again once the other's leases end; a call's own n (a smaller one is
// refused while more hold the key, a larger one granted at once); Extend
// of a slot; and Keep and Hold keeping a slot past its TTL.
//
// The expiry subtest waits with the function given to [WithExpiry]. A
// slot lapses by the backend's clock while the other slots of its key
// live on, so that function must let d pass for the clock the backend
// reads as well as for the store's key expiry (for miniredis, whose TIME
// follows the wall clock: FastForward(d) and sleep d). The keep-alive
// subtest always sleeps: it proves that a heartbeat, not a frozen clock,
// kept the slot.
func RunLimit(t *testing.T, newBackend func(t *testing.T) lock.Backend, opts ...Option) {
	t.Helper()
	s := newSuite(t, opts)
	s.runGroups(t, newBackend, []group{
		{"concurrency", s.limitConcurrencyTests()},
		{"grant", s.limitGrantTests()},
		{"expiry", s.limitExpiryTests()},
		{"ownership", s.limitOwnershipTests()},
		{"fence", s.limitFenceTests()},
		{"validation", s.limitValidationTests()},
		{"lookup", s.limitLookupTests()},
		{"kind", s.limitKindTests()},
		{"change n", s.limitChangeTests()},
		{"keep", s.limitKeepTests()},
	})
}

// limitTest adapts a test of a lock.IDBackend to the suite's tests, failing
// when the backend is not one.
func limitTest(fn func(t *testing.T, lim lock.IDBackend)) func(t *testing.T, b lock.Backend) {
	return func(t *testing.T, b lock.Backend) {
		t.Helper()
		lim, ok := b.(lock.IDBackend)
		if !ok {
			t.Fatalf("locktest: RunLimit needs a lock.IDBackend; %T is not one", b)
		}
		fn(t, lim)
	}
}

// newSlotID returns a fresh lock id for a slot of key, or ends the test.
func newSlotID(t *testing.T, lim lock.IDBackend, key string) string {
	t.Helper()
	id, err := lim.NewLockID(key)
	if err != nil {
		t.Fatalf("NewLockID: %v", err)
	}
	if err := lockdriver.ValidateLockID(id); err != nil {
		t.Fatalf("NewLockID: malformed id: %v", err)
	}
	return id
}

// mustSlot takes one of n slots of key for ttl with a fresh id, or ends
// the test.
func mustSlot(t *testing.T, lim lock.IDBackend, key string, n int, ttl time.Duration) lock.Lease {
	t.Helper()
	id := newSlotID(t, lim, key)
	l, err := lim.AcquireSlot(ctx(t), key, id, n, ttl)
	if err != nil {
		t.Fatalf("AcquireSlot(n=%d): %v", n, err)
	}
	if l.ID != id {
		t.Fatalf("AcquireSlot: Lease.ID is not the id asked for")
	}
	checkLease(t, "AcquireSlot", lim, l, key)
	return l
}

// wantFull checks that one more slot of key among n is refused as
// contention (an error matching lock.ErrLocked, no system error code), and
// returns its LockedError (nil when the error is not one).
func wantFull(t *testing.T, lim lock.IDBackend, key string, n int) *lock.LockedError {
	t.Helper()
	id := newSlotID(t, lim, key)
	l, err := lim.AcquireSlot(ctx(t), key, id, n, longTTL)
	if err == nil {
		_ = lim.Release(ctx(t), l.ID)
		t.Errorf("AcquireSlot(n=%d) of a full key was granted, want an error matching lock.ErrLocked", n)
		return nil
	}
	if !errors.Is(err, lock.ErrLocked) {
		t.Errorf("AcquireSlot(n=%d) of a full key: %v, want an error matching lock.ErrLocked", n, err)
	}
	if c := lock.CodeOf(err); c != "" {
		t.Errorf("AcquireSlot(n=%d) of a full key: error has code %s; contention is not a system failure", n, c)
	}
	var le *lock.LockedError
	if !errors.As(err, &le) {
		t.Errorf("AcquireSlot(n=%d) of a full key: %v is not a *lock.LockedError", n, err)
	}
	return le
}

// holders returns LookupLimit(key), failing the test on error.
func holders(t *testing.T, lim lock.IDBackend, key string) *lock.LimitInfo {
	t.Helper()
	info, err := lim.LookupLimit(ctx(t), key)
	if err != nil {
		t.Fatalf("LookupLimit: %v", err)
	}
	return info
}

// assertSlots checks that exactly the slots ls hold key, by LookupLimit
// (id hashes, fences) and LookupID.
func assertSlots(t *testing.T, lim lock.IDBackend, key string, ls ...lock.Lease) {
	t.Helper()
	info := holders(t, lim, key)
	if len(ls) == 0 {
		if info != nil {
			t.Errorf("LookupLimit = %d holders, want nil (no live slot)", len(info.Holders))
		}
		return
	}
	if info == nil {
		t.Errorf("LookupLimit = nil, want %d holders", len(ls))
		return
	}
	got := map[string]lock.Fence{}
	for _, h := range info.Holders {
		got[h.IDHash] = h.Fence
	}
	if len(info.Holders) != len(ls) {
		t.Errorf("LookupLimit: %d holders, want %d", len(info.Holders), len(ls))
	}
	for i, l := range ls {
		if f, ok := got[lockdriver.HashKey(l.ID)]; !ok {
			t.Errorf("LookupLimit: slot %d (fence %s) is not among the holders", i, l.Fence)
		} else if f != l.Fence {
			t.Errorf("LookupLimit: slot %d has fence %s, want %s", i, f, l.Fence)
		}
		if info, err := lim.LookupID(ctx(t), l.ID); err != nil || info == nil {
			t.Errorf("LookupID(slot %d) = %v, %v; want the slot", i, info, err)
		}
	}
}

// releaseAll releases every slot of ls and checks that key is then free.
func releaseAll(t *testing.T, lim lock.IDBackend, key string, ls ...lock.Lease) {
	t.Helper()
	for _, l := range ls {
		mustRelease(t, lim, l)
	}
	assertSlots(t, lim, key)
}

// wantKindMismatch fails the test unless err matches lock.ErrKindMismatch
// with code InvalidArgument, and is not contention.
func wantKindMismatch(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, lock.ErrKindMismatch) {
		t.Errorf("%s: %v, want an error matching lock.ErrKindMismatch", what, err)
	}
	wantCode(t, what, err, lock.CodeInvalidArgument)
	if errors.Is(err, lock.ErrLocked) {
		t.Errorf("%s: %v matches ErrLocked; a kind mismatch is not contention", what, err)
	}
}
