package locktest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/multilock"
)

// RunMulti runs the conformance suite of multi-key locks (package
// lock/multilock) as subtests of t, like [Run]: newBackend returns a fresh,
// isolated lock.IDBackend for each subtest. The options are Run's.
//
// The suite checks, through multilock.Do and Hold: all keys or none (a
// busy key leaves the others free, in one group and across groups); each
// key's lease is a plain lease (IsLocked, LookupKey, LookupID, a plain
// Acquire refused) with a fence above the key's earlier grants and below
// its later ones; every key is freed at release, and a plain waiter is
// handed its key; the leases are kept alive together, and the loss of any
// one ends the held context with lock.ErrLeaseLost; holders of
// overlapping sets taken in opposite orders, within one group and across
// groups, never hold a key together and all finish; and InvalidArgument
// for the inputs of [BadMultiInputs]. On a multilock.Backend it also
// checks AcquireMulti: a repeat with the same ids returns the same leases,
// a released id takes nothing, and contention reports the first busy key.
//
// Keys of one group share the hash tag "{g...}", so that a Redis Cluster
// backend that groups keys by their hash tag takes them in one step.
func RunMulti(t *testing.T, newBackend func(t *testing.T) lock.Backend, opts ...Option) {
	t.Helper()
	s := newSuite(t, opts)
	s.runGroups(t, newBackend, []group{
		{"all or none", s.multiAllOrNoneTests()},
		{"leases", s.multiLeaseTests()},
		{"keep", s.multiKeepTests()},
		{"deadlock", s.multiDeadlockTests()},
		{"backend", s.multiBackendTests()},
		{"validation", s.multiValidationTests()},
	})
}

// multiKeys returns n fresh keys: of one group (hash tag) when groups is
// 1, else spread round-robin over that many groups.
func (s *suite) multiKeys(t *testing.T, n, groups int) []string {
	base := s.key(t, "multi")
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/{g%d}/k%d", base, i%groups, i)
	}
	return keys
}

// multiHold is multilock.Hold that ends the test on error.
func multiHold(t *testing.T, b lock.Backend, keys []string, opts ...lock.Option) (context.Context, []lock.Lease, func() error) {
	t.Helper()
	held, leases, release, err := multilock.Hold(ctx(t), b, keys, opts...)
	if err != nil {
		t.Fatalf("multilock.Hold: %v", err)
	}
	t.Cleanup(func() { _ = release() })
	if len(leases) != len(keys) {
		t.Fatalf("multilock.Hold: %d leases for %d keys", len(leases), len(keys))
	}
	for i, l := range leases {
		checkLease(t, "multilock.Hold", b, l, keys[i])
	}
	return held, leases, release
}

func (s *suite) multiAllOrNoneTests() []test {
	return []test{
		{"a busy key in the group leaves the others free", func(t *testing.T, b lock.Backend) {
			s.testAllOrNone(t, b, 1)
		}},
		{"a busy key in a later group frees the earlier groups", func(t *testing.T, b lock.Backend) {
			s.testAllOrNone(t, b, 3)
		}},
	}
}

// testAllOrNone: with one key of a set held by a plain lease, a
// multi-key Hold without a wait fails with CodeAcquisitionTimeout matching
// lock.ErrLocked, and leaves every other key of the set free.
func (s *suite) testAllOrNone(t *testing.T, b lock.Backend, groups int) {
	keys := s.multiKeys(t, 6, groups)
	for _, busy := range []int{0, 5} {
		holder := mustAcquire(t, b, keys[busy], longTTL)
		_, _, _, err := multilock.Hold(ctx(t), b, keys, lock.WithWait(0))
		if !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("Hold with key %d busy: %v, want an error matching lock.ErrLocked", busy, err)
		}
		wantCode(t, "Hold with a busy key", err, lock.CodeAcquisitionTimeout)
		for i, k := range keys {
			if i != busy {
				assertFree(t, b, k)
			}
		}
		assertHeld(t, b, holder)
		mustRelease(t, b, holder)
	}
}

func (s *suite) multiLeaseTests() []test {
	return []test{
		{"every lease is a plain lease", s.testMultiPlainLeases},
		{"fences follow each key's counter", s.testMultiFences},
		{"a plain waiter is handed its key at release", s.testMultiHandOff},
		{"a multi-key wait gets the keys of a plain holder", s.testMultiWaits},
	}
}

// testMultiPlainLeases: each lease of a multi-key Hold holds its key as
// a plain lease does, and the release frees every key, once.
func (s *suite) testMultiPlainLeases(t *testing.T, b lock.Backend) {
	keys := s.multiKeys(t, 4, 2)
	held, leases, release := multiHold(t, b, keys, lock.WithTTL(longTTL))
	for _, l := range leases {
		assertHeld(t, b, l)
		if _, err := b.Acquire(ctx(t), l.Key, longTTL); !errors.Is(err, lock.ErrLocked) {
			t.Errorf("plain Acquire of a key held by a multi-key lease: %v, want lock.ErrLocked", err)
		}
	}
	if got, ok := multilock.LeasesFrom(held); !ok || len(got) != len(keys) || got[2] != leases[2] {
		t.Errorf("LeasesFrom(held) = %v, %v; want the leases", got, ok)
	}
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := release(); err != nil {
		t.Errorf("second release: %v, want the first one's nil", err)
	}
	if !errors.Is(context.Cause(held), lock.ErrLeaseLost) {
		t.Errorf("held's cause after release: %v, want one matching lock.ErrLeaseLost", context.Cause(held))
	}
	for i, k := range keys {
		assertFree(t, b, k)
		assertGone(t, b, leases[i].ID)
	}
}

// testMultiFences: a key's multi-key grant has a fence above its plain
// grants before and below those after.
func (s *suite) testMultiFences(t *testing.T, b lock.Backend) {
	if !fencing(b) {
		t.Skip("the backend does not fence")
	}
	keys := s.multiKeys(t, 3, 1)
	before := mustAcquire(t, b, keys[1], longTTL)
	mustRelease(t, b, before)
	var multi lock.Fence
	err := multilock.Do(ctx(t), b, keys, func(_ context.Context, leases []lock.Lease) error {
		multi = leases[1].Fence
		return nil
	})
	if err != nil {
		t.Fatalf("multilock.Do: %v", err)
	}
	after := mustAcquire(t, b, keys[1], longTTL)
	mustRelease(t, b, after)
	if !(before.Fence.Compare(multi) < 0 && multi.Compare(after.Fence) < 0) {
		t.Errorf("fences %s (plain), %s (multi), %s (plain): want strictly increasing", before.Fence, multi, after.Fence)
	}
}

// testMultiHandOff: a plain lock.Acquire waiting for a key of a
// multi-key holder gets it once the holder releases.
func (s *suite) testMultiHandOff(t *testing.T, b lock.Backend) {
	keys := s.multiKeys(t, 3, 1)
	_, leases, release := multiHold(t, b, keys, lock.WithTTL(longTTL))
	got := make(chan error, 1)
	go func() {
		l, err := lock.Acquire(ctx(t), b, keys[2], lock.WithTTL(longTTL), lock.WithWait(callTimeout/2))
		if err == nil && fencing(b) && l.Fence.Compare(leases[2].Fence) <= 0 {
			err = fmt.Errorf("waiter's fence %s not above the multi-key lease's %s", l.Fence, leases[2].Fence)
		}
		if err == nil {
			err = b.Release(ctx(t), l.ID)
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond) // the waiter is waiting
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("plain waiter: %v", err)
	}
}

// testMultiWaits: a multi-key Hold with a wait gets its keys once the
// plain holders of two of them release.
func (s *suite) testMultiWaits(t *testing.T, b lock.Backend) {
	keys := s.multiKeys(t, 4, 2)
	a, c := mustAcquire(t, b, keys[0], longTTL), mustAcquire(t, b, keys[3], longTTL)
	time.AfterFunc(100*time.Millisecond, func() { _ = b.Release(context.Background(), a.ID) })
	time.AfterFunc(200*time.Millisecond, func() { _ = b.Release(context.Background(), c.ID) })
	start := time.Now()
	_, leases, release := multiHold(t, b, keys, lock.WithTTL(longTTL), lock.WithWait(callTimeout/2))
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("Hold returned after %v, before the last holder released", d)
	}
	if fencing(b) && (leases[0].Fence.Compare(a.Fence) <= 0 || leases[3].Fence.Compare(c.Fence) <= 0) {
		t.Errorf("fences %s, %s after the holders' %s, %s: want greater", leases[0].Fence, leases[3].Fence, a.Fence, c.Fence)
	}
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
}

func (s *suite) multiKeepTests() []test {
	return []test{
		{"a key taken while waiting for another stays held", s.testMultiHeldWhileWaiting},
		{"leases are kept alive together", func(t *testing.T, b lock.Backend) {
			keys := s.multiKeys(t, 3, 2)
			held, leases, release := multiHold(t, b, keys, lock.WithTTL(multiKeepTTL))
			time.Sleep(2 * multiKeepTTL) // always sleeps: a heartbeat, not a frozen clock, keeps them
			if err := context.Cause(held); err != nil {
				t.Fatalf("held ended: %v", err)
			}
			for _, l := range leases {
				if info, err := b.LookupID(ctx(t), l.ID); err != nil || info == nil {
					t.Errorf("LookupID after 2 TTLs = %v, %v; want the kept lease", info, err)
				}
			}
			if err := release(); err != nil {
				t.Fatalf("release: %v", err)
			}
		}},
		{"losing one lease ends held", func(t *testing.T, b lock.Backend) {
			keys := s.multiKeys(t, 3, 1)
			held, leases, release := multiHold(t, b, keys, lock.WithTTL(shortTTL))
			if err := b.Release(ctx(t), leases[1].ID); err != nil {
				t.Fatalf("Release of one lease: %v", err)
			}
			select {
			case <-held.Done():
			case <-time.After(callTimeout):
				t.Fatal("held did not end after a lease was lost")
			}
			if !errors.Is(context.Cause(held), lock.ErrLeaseLost) {
				t.Errorf("held's cause: %v, want one matching lock.ErrLeaseLost", context.Cause(held))
			}
			if err := release(); !errors.Is(err, lock.ErrLeaseLost) {
				t.Errorf("release: %v, want one matching lock.ErrLeaseLost", err)
			}
			for _, k := range keys {
				assertFree(t, b, k)
			}
		}},
	}
}

// multiKeepTTL is the TTL of the keep-alive tests: long enough for the
// heartbeats (every TTL/3) to be late on a loaded machine, under -race,
// beside a Redis Cluster's six processes.
const multiKeepTTL = 800 * time.Millisecond

// Size of the deadlock test: workers holding overlapping sets.
const (
	multiWorkers = 8
	multiRounds  = 4
)

func (s *suite) multiDeadlockTests() []test {
	return []test{
		{"overlapping sets in opposite orders, one group", func(t *testing.T, b lock.Backend) {
			s.testNoDeadlock(t, b, 1)
		}},
		{"overlapping sets in opposite orders, across groups", func(t *testing.T, b lock.Backend) {
			s.testNoDeadlock(t, b, 3)
		}},
	}
}

// testNoDeadlock: multiWorkers goroutines each take, multiRounds times,
// a window of 3 of 6 keys that overlaps its neighbours' windows, every
// other worker naming its keys in reverse order. No key ever has two
// holders, every key's fences strictly increase, and every worker
// finishes (a deadlock would hold until callTimeout).
func (s *suite) testNoDeadlock(t *testing.T, b lock.Backend, groups int) {
	keys := s.multiKeys(t, 6, groups)
	occ := make([]occupancy, len(keys))
	var mu sync.Mutex
	last := map[string]lock.Fence{}
	var wg sync.WaitGroup
	for w := range multiWorkers {
		set := []string{keys[w%6], keys[(w+1)%6], keys[(w+2)%6]}
		idx := []int{w % 6, (w + 1) % 6, (w + 2) % 6}
		if w%2 == 1 {
			set[0], set[2], idx[0], idx[2] = set[2], set[0], idx[2], idx[0]
		}
		wg.Go(func() {
			for r := range multiRounds {
				err := multilock.Do(ctx(t), b, set, func(_ context.Context, leases []lock.Lease) error {
					for i, l := range leases {
						occ[idx[i]].enter()
						mu.Lock()
						if f, ok := last[l.Key]; ok && fencing(b) && l.Fence.Compare(f) <= 0 {
							t.Errorf("key %s: fence %s after %s, want greater", l.Key, l.Fence, f)
						}
						last[l.Key] = l.Fence
						mu.Unlock()
					}
					for _, i := range idx {
						occ[i].leave()
					}
					return nil
				}, lock.WithTTL(longTTL), lock.WithWait(callTimeout))
				if err != nil {
					t.Errorf("worker %d, round %d: %v", w, r, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range occ {
		if p := occ[i].peak.Load(); p > 1 {
			t.Errorf("key %d had %d holders at once, want 1", i, p)
		}
	}
	for _, k := range keys {
		assertFree(t, b, k)
	}
}

func (s *suite) multiBackendTests() []test {
	return []test{
		{"AcquireMulti is safe to repeat", s.testAcquireMultiRepeat},
		{"AcquireMulti reports the first busy key", s.testAcquireMultiBusy},
	}
}

// multiBackend returns b as a multilock.Backend, or skips the test.
func multiBackend(t *testing.T, b lock.Backend) multilock.Backend {
	m, ok := b.(multilock.Backend)
	if !ok {
		t.Skip("not a multilock.Backend")
	}
	return m
}

// multiIDs returns a fresh lock id per key of one group.
func multiIDs(t *testing.T, m multilock.Backend, keys []string) []string {
	t.Helper()
	ids := make([]string, len(keys))
	for i, k := range keys {
		id, err := m.NewLockID(k)
		if err != nil {
			t.Fatalf("NewLockID: %v", err)
		}
		ids[i] = id
	}
	return ids
}

// testAcquireMultiRepeat: AcquireMulti sent twice with the same ids (a
// command re-sent after its reply was lost) returns the same leases; once
// they are released, the same call takes nothing.
func (s *suite) testAcquireMultiRepeat(t *testing.T, b lock.Backend) {
	m := multiBackend(t, b)
	keys := s.multiKeys(t, 3, 1)
	ids := multiIDs(t, m, keys)
	first, err := m.AcquireMulti(ctx(t), keys, ids, longTTL)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("AcquireMulti: %v", err)
	}
	if err != nil {
		t.Fatalf("AcquireMulti: %v", err)
	}
	again, err := m.AcquireMulti(ctx(t), keys, ids, longTTL)
	if err != nil {
		t.Fatalf("AcquireMulti again with the same ids: %v, want the same leases", err)
	}
	for i := range first {
		if again[i].Fence != first[i].Fence || again[i].ID != first[i].ID {
			t.Errorf("key %d: repeat got fence %s id hash %s, want the first %s %s", i, again[i].Fence,
				lockdriver.HashKey(again[i].ID), first[i].Fence, lockdriver.HashKey(first[i].ID))
		}
	}
	for i, err := range m.ReleaseMulti(ctx(t), ids) {
		if err != nil {
			t.Errorf("ReleaseMulti %d: %v", i, err)
		}
	}
	if _, err := m.AcquireMulti(ctx(t), keys, ids, longTTL); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("AcquireMulti with released ids: %v, want lock.ErrNotHeld", err)
	}
	for _, k := range keys {
		assertFree(t, b, k)
	}
	for i, err := range m.ReleaseMulti(ctx(t), ids) {
		wantNotHeld(t, "ReleaseMulti of released lease "+strconv.Itoa(i), err)
	}
}

// testAcquireMultiBusy: contention is a *multilock.BusyError naming the
// first busy key, matching lock.ErrLocked with the holder's expiry, and
// takes nothing.
func (s *suite) testAcquireMultiBusy(t *testing.T, b lock.Backend) {
	m := multiBackend(t, b)
	keys := s.multiKeys(t, 4, 1)
	holder := mustAcquire(t, b, keys[2], longTTL)
	_, err := m.AcquireMulti(ctx(t), keys, multiIDs(t, m, keys), longTTL)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("AcquireMulti: %v", err)
	}
	var busy *multilock.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("AcquireMulti with key 2 busy: %v, want a *multilock.BusyError matching lock.ErrLocked", err)
	}
	if busy.Index != 2 {
		t.Errorf("BusyError.Index = %d, want 2", busy.Index)
	}
	if !busy.ExpiresAt.IsZero() && !near(busy.ExpiresAt, holder.ExpiresAt, time.Millisecond) {
		t.Errorf("BusyError.ExpiresAt = %v, want the holder's %v", busy.ExpiresAt, holder.ExpiresAt)
	}
	for i, k := range keys {
		if i != 2 {
			assertFree(t, b, k)
		}
	}
	mustRelease(t, b, holder)
}

func (s *suite) multiValidationTests() []test {
	return []test{{"bad input is InvalidArgument", func(t *testing.T, b lock.Backend) {
		keys := s.multiKeys(t, 2, 1)
		for _, in := range BadMultiInputs(keys[0]) {
			err := in.Call(b)
			wantCode(t, in.Name, err, lock.CodeInvalidArgument)
			// An option that does not apply is named.
			if _, opt, ok := strings.Cut(in.Name, "/With"); ok && err != nil && !strings.Contains(err.Error(), "With"+opt) {
				t.Errorf("%s: error %q does not name With%s", in.Name, err, opt)
			}
		}
		for _, k := range keys {
			assertFree(t, b, k)
		}
	}}}
}

// BadMultiInputs returns every invalid call of the multi-key suite (see
// [RunMulti]): through multilock.Do and Hold, an empty key list, a
// duplicate key (also one equal only after NFC), more than
// multilock.MaxKeys keys, a bad key, an option about one key's lease
// (lock.WithLimit, WithLease, WithReleaseFunc, WithWatch), a nil context
// and a nil function. A conforming lock.IDBackend fails each with an
// error whose lock.CodeOf is lock.CodeInvalidArgument, before any I/O.
// key is a valid key; nothing is taken when the backend conforms.
func BadMultiInputs(key string) []BadInput {
	other := key + "/other"
	tooMany := make([]string, multilock.MaxKeys+1)
	for i := range tooMany {
		tooMany[i] = key + "/" + strconv.Itoa(i)
	}
	fn := func(context.Context, []lock.Lease) error { return nil }
	bg := context.Background()
	var in badInputs
	for _, c := range []struct {
		name string
		keys []string
		opts []lock.Option
	}{
		{"no keys", nil, nil},
		{"duplicate key", []string{key, other, key}, nil},
		{"duplicate key after NFC", []string{key + "/e\u0301", key + "/\u00e9"}, nil},
		{strconv.Itoa(multilock.MaxKeys+1) + " keys", tooMany, nil},
		{"empty key", []string{key, ""}, nil},
		{"WithLimit", []string{key, other}, []lock.Option{lock.WithLimit(2)}},
		{"WithLease", []string{key, other}, []lock.Option{lock.WithLease(lock.Lease{Key: key, ID: lockdriver.NewLockID()})}},
		{"WithReleaseFunc", []string{key, other}, []lock.Option{lock.WithReleaseFunc(func(context.Context, lock.Lease, error) error { return nil })}},
		{"WithWatch", []string{key, other}, []lock.Option{lock.WithWatch(make(chan struct{}), func() (time.Time, bool) { return time.Time{}, false })}},
		{"zero TTL", []string{key, other}, []lock.Option{lock.WithTTL(0)}},
	} {
		in.add("multilock.Do/"+c.name, func(b lock.Backend) error { return multilock.Do(bg, b, c.keys, fn, c.opts...) })
		in.add("multilock.Hold/"+c.name, func(b lock.Backend) error {
			_, _, release, err := multilock.Hold(bg, b, c.keys, c.opts...)
			if err == nil {
				_ = release()
			}
			return err
		})
	}
	var nilCtx context.Context
	in.add("multilock.Do/nil context", func(b lock.Backend) error { return multilock.Do(nilCtx, b, []string{key}, fn) })
	in.add("multilock.Do/nil function", func(b lock.Backend) error { return multilock.Do(bg, b, []string{key}, nil) })
	return in
}

// testMultiHeldWhileWaiting: plain holders hold both keys of a set; the
// first is released early, so a multi-key Hold (short TTL) takes it and
// waits for the second, past several TTLs. The key it took stays held all
// along (kept alive), and its lease, same fence, is the one Hold returns.
func (s *suite) testMultiHeldWhileWaiting(t *testing.T, b lock.Backend) {
	keys := s.multiKeys(t, 2, 1)
	first, second := mustAcquire(t, b, keys[0], longTTL), mustAcquire(t, b, keys[1], longTTL)
	time.AfterFunc(50*time.Millisecond, func() { _ = b.Release(context.Background(), first.ID) })
	time.AfterFunc(3*multiKeepTTL, func() { _ = b.Release(context.Background(), second.ID) })
	type result struct {
		leases []lock.Lease
		err    error
	}
	done := make(chan result, 1)
	go func() {
		_, leases, release, err := multilock.Hold(ctx(t), b, keys, lock.WithTTL(multiKeepTTL), lock.WithWait(callTimeout/2))
		if err == nil {
			t.Cleanup(func() { _ = release() })
		}
		done <- result{leases, err}
	}()
	time.Sleep(5 * multiKeepTTL / 2) // past the TTL of a lease taken at 50ms
	info, err := b.LookupKey(ctx(t), keys[0])
	if err != nil || info == nil {
		t.Fatalf("LookupKey of the key taken while waiting = %v, %v; want it held", info, err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("multilock.Hold: %v", r.err)
	}
	if r.leases[0].Fence != info.Fence {
		t.Errorf("lease of the first key has fence %s, want %s, the one held while waiting", r.leases[0].Fence, info.Fence)
	}
}
