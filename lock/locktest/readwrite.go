package locktest

import (
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

// RunReadWrite runs the read-write lock suite as subtests of t, as [Run]
// does, on backends that implement [rwlock.Backend]: sharing and
// exclusion, fences from the key's counter, retry-safe attempts, release,
// extension and lookup by id, expiry, the kinds of a key, the queue's
// order (readers together, a waiting writer keeps new readers out) and
// bad input.
func RunReadWrite(t *testing.T, newBackend func(t *testing.T) lock.Backend, opts ...Option) {
	t.Helper()
	s := newSuite(t, opts)
	s.runGroups(t, newBackend, []group{
		{"share", s.rwShareTests()},
		{"fence", s.rwFenceTests()},
		{"lease", s.rwLeaseTests()},
		{"kind", s.rwKindTests()},
		{"queue", s.rwQueueTests()},
		{"validation", s.rwValidationTests()},
	})
}

// rwTest adapts a read-write test to the suite's backends.
func rwTest(fn func(t *testing.T, b rwlock.Backend)) func(t *testing.T, b lock.Backend) {
	return func(t *testing.T, b lock.Backend) {
		t.Helper()
		rw, ok := b.(rwlock.Backend)
		if !ok {
			t.Fatalf("locktest: RunReadWrite needs an rwlock.Backend; %T is not one", b)
		}
		fn(t, rw)
	}
}

// tryRW makes one AcquireRW with a fresh id.
func tryRW(t *testing.T, b rwlock.Backend, key string, mode rwlock.Mode, ttl time.Duration) (lock.Lease, error) {
	t.Helper()
	id, err := b.NewLockID(key)
	if err != nil {
		t.Fatalf("NewLockID: %v", err)
	}
	return b.AcquireRW(ctx(t), key, id, mode, ttl)
}

// mustRW holds key in mode or ends the test.
func mustRW(t *testing.T, b rwlock.Backend, key string, mode rwlock.Mode, ttl time.Duration) lock.Lease {
	t.Helper()
	l, err := tryRW(t, b, key, mode, ttl)
	if err != nil {
		t.Fatalf("AcquireRW(%s): %v", mode, err)
	}
	checkLease(t, "AcquireRW", b, l, key)
	return l
}

// wantBusy fails the test unless err is contention whose ExpiresAt is
// near want.
func wantBusy(t *testing.T, what string, err error, want time.Time) {
	t.Helper()
	var le *lock.LockedError
	switch {
	case !errors.As(err, &le):
		t.Errorf("%s: %v, want a *lock.LockedError", what, err)
	case !near(le.ExpiresAt, want, 5*time.Millisecond):
		t.Errorf("%s: ExpiresAt %v, want %v (the latest holder's expiry)", what, le.ExpiresAt, want)
	}
}

// wantHolders fails the test unless LookupRW finds the writer w (or none)
// and exactly the readers rs.
func wantHolders(t *testing.T, b rwlock.Backend, key string, w *lock.Lease, rs ...lock.Lease) {
	t.Helper()
	info, err := b.LookupRW(ctx(t), key)
	if err != nil {
		t.Fatalf("LookupRW: %v", err)
	}
	if w == nil && len(rs) == 0 {
		if info != nil {
			t.Errorf("LookupRW = %+v, want nil (no holder)", info)
		}
		return
	}
	if info == nil {
		t.Fatalf("LookupRW = nil, want the holders")
	}
	switch {
	case w == nil && info.Writer != nil:
		t.Errorf("LookupRW: a writer %+v, want none", info.Writer)
	case w != nil && (info.Writer == nil || info.Writer.IDHash != lockdriver.HashKey(w.ID) || info.Writer.Fence != w.Fence):
		t.Errorf("LookupRW: writer %+v, want the writer's lease (fence %s)", info.Writer, w.Fence)
	}
	got := map[string]lock.Fence{}
	for _, r := range info.Readers {
		got[r.IDHash] = r.Fence
	}
	if len(got) != len(rs) {
		t.Errorf("LookupRW: %d readers, want %d", len(got), len(rs))
	}
	for _, r := range rs {
		if got[lockdriver.HashKey(r.ID)] != r.Fence {
			t.Errorf("LookupRW: reader with fence %s missing", r.Fence)
		}
	}
}

func (s *suite) rwShareTests() []test {
	return []test{
		{"readers share the key", rwTest(s.testRWReadersShare)},
		{"a writer is alone", rwTest(s.testRWWriterAlone)},
		{"readers keep a writer out", rwTest(s.testRWReadersExcludeWriter)},
		{"a key freed by expiry", rwTest(s.testRWExpiry)},
	}
}

// testRWReadersShare: three readers hold one key at once.
func (s *suite) testRWReadersShare(t *testing.T, b rwlock.Backend) {
	key := s.key(t, "k")
	var rs []lock.Lease
	for range 3 {
		rs = append(rs, mustRW(t, b, key, rwlock.ModeRead, longTTL))
	}
	wantHolders(t, b, key, nil, rs...)
	for _, r := range rs {
		mustRelease(t, b, r)
	}
	wantHolders(t, b, key, nil)
}

// testRWWriterAlone: while a writer holds the key, neither a reader nor
// another writer gets it; both are told the writer's expiry.
func (s *suite) testRWWriterAlone(t *testing.T, b rwlock.Backend) {
	key := s.key(t, "k")
	w := mustRW(t, b, key, rwlock.ModeWrite, longTTL)
	_, err := tryRW(t, b, key, rwlock.ModeRead, longTTL)
	wantBusy(t, "a reader beside the writer", err, w.ExpiresAt)
	_, err = tryRW(t, b, key, rwlock.ModeWrite, longTTL)
	wantBusy(t, "a second writer", err, w.ExpiresAt)
	wantHolders(t, b, key, &w)
	mustRelease(t, b, w)
	r := mustRW(t, b, key, rwlock.ModeRead, longTTL)
	mustRelease(t, b, r)
}

// testRWReadersExcludeWriter: a writer waits for every reader; its
// contention names the latest reader's expiry, when the key frees.
func (s *suite) testRWReadersExcludeWriter(t *testing.T, b rwlock.Backend) {
	key := s.key(t, "k")
	r1 := mustRW(t, b, key, rwlock.ModeRead, longTTL)
	r2 := mustRW(t, b, key, rwlock.ModeRead, 2*longTTL)
	_, err := tryRW(t, b, key, rwlock.ModeWrite, longTTL)
	wantBusy(t, "a writer beside readers", err, r2.ExpiresAt)
	mustRelease(t, b, r2)
	_, err = tryRW(t, b, key, rwlock.ModeWrite, longTTL)
	wantBusy(t, "a writer beside one reader", err, r1.ExpiresAt)
	mustRelease(t, b, r1)
	w := mustRW(t, b, key, rwlock.ModeWrite, longTTL)
	mustRelease(t, b, w)
}

// testRWExpiry: a writer that is never released frees the key at its
// TTL, by the backend's clock, and so do readers.
func (s *suite) testRWExpiry(t *testing.T, b rwlock.Backend) {
	key := s.key(t, "k")
	w := mustRW(t, b, key, rwlock.ModeWrite, shortTTL)
	s.wait(t, expiryWait(shortTTL))
	r := mustRW(t, b, key, rwlock.ModeRead, shortTTL)
	wantIncreasing(t, "a reader after an expired writer", r.Fence, w.Fence)
	wantNotHeld(t, "Release of the expired writer", b.Release(ctx(t), w.ID))
	s.wait(t, expiryWait(shortTTL))
	w2 := mustRW(t, b, key, rwlock.ModeWrite, longTTL)
	wantIncreasing(t, "a writer after an expired reader", w2.Fence, r.Fence)
	mustRelease(t, b, w2)
}

func (s *suite) rwFenceTests() []test {
	return []test{
		{"every grant is fenced from the key's counter", rwTest(s.testRWFences)},
		{"locks and read-write locks share the key's order", rwTest(s.testRWFenceKinds)},
	}
}

// testRWFences: readers' fences strictly increase in grant order, and a
// writer's is above every fence granted before it.
func (s *suite) testRWFences(t *testing.T, b rwlock.Backend) {
	requireFencing(t, b)
	key := s.key(t, "k")
	var prev lock.Fence
	for round := range 3 {
		var rs []lock.Lease
		for i := range 3 {
			r := mustRW(t, b, key, rwlock.ModeRead, longTTL)
			if round > 0 || i > 0 {
				wantIncreasing(t, "reader", r.Fence, prev)
			}
			prev = r.Fence
			rs = append(rs, r)
		}
		for _, r := range rs {
			mustRelease(t, b, r)
		}
		w := mustRW(t, b, key, rwlock.ModeWrite, longTTL)
		wantIncreasing(t, "writer after readers", w.Fence, prev)
		prev = w.Fence
		mustRelease(t, b, w)
	}
}

// testRWFenceKinds: a key used as a lock, then as a read-write lock, then
// as a lock takes every grant's fence from one order.
func (s *suite) testRWFenceKinds(t *testing.T, b rwlock.Backend) {
	requireFencing(t, b)
	key := s.key(t, "k")
	l1 := mustAcquire(t, b, key, longTTL)
	mustRelease(t, b, l1)
	r := mustRW(t, b, key, rwlock.ModeRead, longTTL)
	mustRelease(t, b, r)
	l2 := mustAcquire(t, b, key, longTTL)
	mustRelease(t, b, l2)
	wantIncreasing(t, "reader after a lock", r.Fence, l1.Fence)
	wantIncreasing(t, "lock after a reader", l2.Fence, r.Fence)
}
