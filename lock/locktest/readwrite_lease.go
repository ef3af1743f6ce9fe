package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

func (s *suite) rwLeaseTests() []test {
	return []test{
		{"an attempt sent twice gets its grant back", rwTest(s.testRWRetrySafe)},
		{"release, extend and lookup by id", rwTest(s.testRWByID)},
	}
}

// testRWRetrySafe: an attempt repeated with the id of a live holder gets
// that grant (same fence), in both modes; after the release the id takes
// nothing.
func (s *suite) testRWRetrySafe(t *testing.T, b rwlock.Backend) {
	for _, mode := range []rwlock.Mode{rwlock.ModeRead, rwlock.ModeWrite} {
		key := s.key(t, mode.String())
		id, err := b.NewLockID(key)
		if err != nil {
			t.Fatalf("NewLockID: %v", err)
		}
		l1, err1 := b.AcquireRW(ctx(t), key, id, mode, longTTL)
		l2, err2 := b.AcquireRW(ctx(t), key, id, mode, longTTL)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: AcquireRW twice with one id: %v, %v; want two grants", mode, err1, err2)
		}
		if l1.ID != id || l2.Fence != l1.Fence || !l2.ExpiresAt.Equal(l1.ExpiresAt) {
			t.Errorf("%s: the repeated attempt got %+v, want the first grant %+v", mode, l2, l1)
		}
		mustRelease(t, b, l1)
		_, err = b.AcquireRW(ctx(t), key, id, mode, longTTL)
		wantNotHeld(t, mode.String()+": AcquireRW with a released id", err)
		wantHolders(t, b, key, nil)
	}
}

// testRWByID: Release, Extend, ExtendBatch and LookupID work on readers
// and writers by their ids, as on locks.
func (s *suite) testRWByID(t *testing.T, b rwlock.Backend) {
	key := s.key(t, "k")
	r := mustRW(t, b, key, rwlock.ModeRead, shortTTL)
	info, err := b.LookupID(ctx(t), r.ID)
	if err != nil || info == nil || info.Fence != r.Fence || info.IDHash != lockdriver.HashKey(r.ID) {
		t.Fatalf("LookupID(reader) = %+v, %v; want the reader's lease", info, err)
	}
	exp, err := b.Extend(ctx(t), r.ID, longTTL)
	if err != nil || !exp.After(r.ExpiresAt) {
		t.Fatalf("Extend(reader) = %v, %v; want a later expiry than %v", exp, err, r.ExpiresAt)
	}
	if info, err := b.LookupID(ctx(t), r.ID); err != nil || info == nil || !near(info.ExpiresAt, exp, time.Millisecond) {
		t.Errorf("LookupID(extended reader) = %+v, %v; want its new expiry %v", info, err, exp)
	}
	s.wait(t, expiryWait(shortTTL))
	res := b.ExtendBatch(ctx(t), []lock.Lease{{Key: key, ID: r.ID, TTL: longTTL}})
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("ExtendBatch(extended reader) = %+v, want its new expiry", res)
	}
	mustRelease(t, b, r)
	wantNotHeld(t, "Release of a released reader", b.Release(ctx(t), r.ID))
	_, err = b.Extend(ctx(t), r.ID, longTTL)
	wantNotHeld(t, "Extend of a released reader", err)
	assertGone(t, b, r.ID)

	w := mustRW(t, b, key, rwlock.ModeWrite, longTTL)
	if info, err := b.LookupID(ctx(t), w.ID); err != nil || info == nil || info.Fence != w.Fence {
		t.Errorf("LookupID(writer) = %+v, %v; want the writer's lease", info, err)
	}
	if _, err := b.Extend(ctx(t), w.ID, longTTL); err != nil {
		t.Errorf("Extend(writer): %v", err)
	}
	mustRelease(t, b, w)
	assertGone(t, b, w.ID)
}

func (s *suite) rwKindTests() []test {
	return []test{
		{"a lock, a limit or a read-write lock", rwTest(s.testRWKinds)},
	}
}

// testRWKinds: a key held as a read-write lock refuses a plain lock and a
// limit, and a key held as either refuses a read-write lock, with
// ErrKindMismatch; free again, it is anything.
func (s *suite) testRWKinds(t *testing.T, b rwlock.Backend) {
	key := s.key(t, "k")
	r := mustRW(t, b, key, rwlock.ModeRead, longTTL)
	_, err := b.Acquire(ctx(t), key, longTTL)
	wantKindMismatch(t, "Acquire on a read-write lock", err)
	_, err = b.AcquireSlot(ctx(t), key, newSlotID(t, b, key), 3, longTTL)
	wantKindMismatch(t, "AcquireSlot on a read-write lock", err)
	mustRelease(t, b, r)

	l := mustAcquire(t, b, key, longTTL)
	_, err = tryRW(t, b, key, rwlock.ModeRead, longTTL)
	wantKindMismatch(t, "a reader on a lock", err)
	_, err = b.LookupRW(ctx(t), key)
	wantKindMismatch(t, "LookupRW on a lock", err)
	mustRelease(t, b, l)

	sl := mustSlot(t, b, key, 3, longTTL)
	_, err = tryRW(t, b, key, rwlock.ModeWrite, longTTL)
	wantKindMismatch(t, "a writer on a limit", err)
	mustRelease(t, b, sl)
	w := mustRW(t, b, key, rwlock.ModeWrite, longTTL)
	mustRelease(t, b, w)
}

func (s *suite) rwValidationTests() []test {
	return []test{{"bad input fails before any I/O", rwTest(s.testRWValidation)}}
}

// testRWValidation: every bad argument of AcquireRW, JoinRW and LookupRW
// gives an InvalidArgument error.
func (s *suite) testRWValidation(t *testing.T, b rwlock.Backend) {
	key := s.key(t, "k")
	id, _ := b.NewLockID(key)
	for _, in := range BadReadWriteInputs(key, id) {
		wantCode(t, in.Name, in.Call(b), lock.CodeInvalidArgument)
	}
}

// BadReadWriteInputs returns the invalid calls of [rwlock.Backend]'s
// methods that the suite makes; each must fail with
// lock.CodeInvalidArgument before any I/O. key is a valid key and id a
// lock id from NewLockID(key).
func BadReadWriteInputs(key, id string) []BadInput {
	acquire := func(name, k, i string, mode rwlock.Mode, ttl time.Duration) BadInput {
		return BadInput{Name: "AcquireRW/" + name, Call: func(b lock.Backend) error {
			_, err := rwOf(b).AcquireRW(context.Background(), k, i, mode, ttl)
			return err
		}}
	}
	return []BadInput{
		acquire("key/empty", "", id, rwlock.ModeRead, time.Second),
		acquire("key/invalid UTF-8", "\xff", id, rwlock.ModeWrite, time.Second),
		acquire("key/too long", padKey(key, lockdriver.MaxKeyBytes+1), id, rwlock.ModeRead, time.Second),
		acquire("id/malformed", key, "not-an-id", rwlock.ModeRead, time.Second),
		acquire("mode/zero", key, id, 0, time.Second),
		acquire("ttl/zero", key, id, rwlock.ModeRead, 0),
		{Name: "LookupRW/key/empty", Call: func(b lock.Backend) error {
			_, err := rwOf(b).LookupRW(context.Background(), "")
			return err
		}},
		{Name: "JoinRW/mode/zero", Call: func(b lock.Backend) error {
			_, err := rwOf(b).JoinRW(key, id, 0, time.Second, time.Second)
			return err
		}},
	}
}

// rwOf returns b as an rwlock.Backend, or a Backend whose calls fail.
func rwOf(b lock.Backend) rwlock.Backend {
	rw, _ := b.(rwlock.Backend)
	return rw
}
