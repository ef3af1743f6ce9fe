package locktest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// recorderTests check a lock.Recorder's acquires that answer with the
// key's mark (AcquireRecord, AcquireDone); a backend that is not a
// Recorder passes them unchecked, and one whose acquire is unsupported
// must have taken nothing.
func (s *suite) recorderTests() []test {
	return []test{
		{"acquire or record: a free key without a record is acquired", recorderTest(s.testAcquireRecordFree)},
		{"acquire or record: a stored record answers and takes nothing, also on a busy key", recorderTest(s.testAcquireRecordAnswers)},
		{"acquire or record: a busy key without a record is contention", recorderTest(s.testAcquireRecordBusy)},
		{"acquire or done: a done marker answers and takes nothing", recorderTest(s.testAcquireDone)},
		{"acquire or mark: records and done markers are apart", recorderTest(s.testMarksApart)},
		{"acquire or mark: bad input fails InvalidArgument", recorderTest(s.testAcquireMarkedInput)},
	}
}

// recorderTest adapts a test of a lock.Recorder to the suite's tests.
func recorderTest(fn func(t *testing.T, rec lock.Recorder)) func(t *testing.T, b lock.Backend) {
	return func(t *testing.T, b lock.Backend) {
		t.Helper()
		if rec, ok := b.(lock.Recorder); ok {
			fn(t, rec)
		}
	}
}

// acquireRecord is rec.AcquireRecord, ending the test when it is
// unsupported (after checking that it took nothing) or fails.
func acquireRecord(t *testing.T, rec lock.Recorder, key string) (lock.Lease, []byte) {
	t.Helper()
	l, r, err := rec.AcquireRecord(ctx(t), key, longTTL)
	if errors.Is(err, errors.ErrUnsupported) {
		assertFree(t, rec, key)
		t.SkipNow() // an optional step, checked to take nothing
	}
	if err != nil {
		t.Fatalf("AcquireRecord: %v", err)
	}
	if (l.ID == "") == (r == nil) {
		t.Fatalf("AcquireRecord = lease %q, record %q; want exactly one of them", l.ID, r)
	}
	if l.ID != "" {
		checkLease(t, "AcquireRecord", rec, l, key)
	}
	return l, r
}

// acquireDone is acquireRecord for AcquireDone.
func acquireDone(t *testing.T, rec lock.Recorder, key string) (lock.Lease, bool) {
	t.Helper()
	l, done, err := rec.AcquireDone(ctx(t), key, longTTL)
	if errors.Is(err, errors.ErrUnsupported) {
		assertFree(t, rec, key)
		t.SkipNow() // an optional step, checked to take nothing
	}
	if err != nil {
		t.Fatalf("AcquireDone: %v", err)
	}
	if (l.ID == "") != done {
		t.Fatalf("AcquireDone = lease %q, done %v; want exactly one of them", l.ID, done)
	}
	if l.ID != "" {
		checkLease(t, "AcquireDone", rec, l, key)
	}
	return l, done
}

// testAcquireRecordFree: the lease AcquireRecord takes is a lease like
// Acquire's, its fence after the key's previous one; ReleaseRecord frees it.
func (s *suite) testAcquireRecordFree(t *testing.T, rec lock.Recorder) {
	key := s.key(t, "k")
	prev := mustAcquire(t, rec, key, longTTL)
	mustRelease(t, rec, prev)
	l, _ := acquireRecord(t, rec, key)
	assertHeld(t, rec, l)
	if fencing(rec) {
		wantIncreasing(t, "AcquireRecord's fence", l.Fence, prev.Fence)
	}
	if err := rec.ReleaseRecord(ctx(t), l, []byte("answer"), longTTL); err != nil {
		t.Fatalf("ReleaseRecord: %v", err)
	}
	assertFree(t, rec, key)
}

// testAcquireRecordAnswers: with a record stored, AcquireRecord returns
// it, whoever holds the key, and takes nothing.
func (s *suite) testAcquireRecordAnswers(t *testing.T, rec lock.Recorder) {
	key := s.key(t, "k")
	want := []byte("answer \x00\xff")
	l, _ := acquireRecord(t, rec, key)
	if err := rec.ReleaseRecord(ctx(t), l, want, longTTL); err != nil {
		t.Fatalf("ReleaseRecord: %v", err)
	}
	for _, busy := range []bool{false, true} {
		var h lock.Lease
		if busy {
			h = mustAcquire(t, rec, key, longTTL) // Acquire ignores records
		}
		got, r := acquireRecord(t, rec, key)
		if got.ID != "" || !bytes.Equal(r, want) {
			t.Errorf("AcquireRecord (busy %v) = lease %q, record %q; want the record %q", busy, got.ID, r, want)
		}
		if busy {
			assertHeld(t, rec, h)
			mustRelease(t, rec, h)
		} else {
			assertFree(t, rec, key)
		}
	}
	if _, _, err := rec.AcquireRecord(ctx(t), key, longTTL); err != nil {
		t.Errorf("AcquireRecord sent again: %v", err)
	}
	assertFree(t, rec, key)
}

// testAcquireRecordBusy: a key held without a record is contention, and
// the holder keeps it.
func (s *suite) testAcquireRecordBusy(t *testing.T, rec lock.Recorder) {
	key := s.key(t, "k")
	h := mustAcquire(t, rec, key, longTTL)
	l, r, err := rec.AcquireRecord(ctx(t), key, longTTL)
	if errors.Is(err, errors.ErrUnsupported) {
		assertHeld(t, rec, h)
		return
	}
	if !errors.Is(err, lock.ErrLocked) || l.ID != "" || r != nil {
		t.Errorf("AcquireRecord on a busy key = %q, %q, %v; want an error matching lock.ErrLocked", l.ID, r, err)
	}
	if _, done, err := rec.AcquireDone(ctx(t), key, longTTL); !errors.Is(err, lock.ErrLocked) && !errors.Is(err, errors.ErrUnsupported) || done {
		t.Errorf("AcquireDone on a busy key = %v, %v; want an error matching lock.ErrLocked", done, err)
	}
	assertHeld(t, rec, h)
	mustRelease(t, rec, h)
}

// testAcquireDone: after ReleaseDone, AcquireDone reports done and takes
// nothing; on a free key without a marker it acquires.
func (s *suite) testAcquireDone(t *testing.T, rec lock.Recorder) {
	key := s.key(t, "k")
	l, _ := acquireDone(t, rec, key)
	assertHeld(t, rec, l)
	if err := rec.ReleaseDone(ctx(t), l, longTTL); err != nil {
		t.Fatalf("ReleaseDone: %v", err)
	}
	for range 2 { // and sent again
		if got, done := acquireDone(t, rec, key); !done || got.ID != "" {
			t.Errorf("AcquireDone after ReleaseDone = lease %q, done %v; want done", got.ID, done)
		}
	}
	assertFree(t, rec, key)
}

// testMarksApart: a record is not a done marker, nor the reverse.
func (s *suite) testMarksApart(t *testing.T, rec lock.Recorder) {
	recorded, done := s.key(t, "recorded"), s.key(t, "done")
	l, _ := acquireRecord(t, rec, recorded)
	if err := rec.ReleaseRecord(ctx(t), l, []byte("answer"), longTTL); err != nil {
		t.Fatalf("ReleaseRecord: %v", err)
	}
	l, _ = acquireDone(t, rec, done)
	if err := rec.ReleaseDone(ctx(t), l, longTTL); err != nil {
		t.Fatalf("ReleaseDone: %v", err)
	}
	if l, isDone := acquireDone(t, rec, recorded); isDone {
		t.Errorf("AcquireDone on a key with a record reported done")
	} else {
		mustRelease(t, rec, l)
	}
	if l, r := acquireRecord(t, rec, done); r != nil {
		t.Errorf("AcquireRecord on a key with a done marker answered %q", r)
	} else {
		mustRelease(t, rec, l)
	}
}

// testAcquireMarkedInput: an invalid key or TTL fails InvalidArgument.
func (s *suite) testAcquireMarkedInput(t *testing.T, rec lock.Recorder) {
	for _, in := range []struct {
		desc, key string
		ttl       time.Duration
	}{{"empty key", "", longTTL}, {"zero TTL", s.key(t, "k"), 0}, {"negative TTL", s.key(t, "k"), -time.Second}} {
		_, _, err := rec.AcquireRecord(ctx(t), in.key, in.ttl)
		if !errors.Is(err, errors.ErrUnsupported) {
			wantCode(t, "AcquireRecord with "+in.desc, err, lock.CodeInvalidArgument)
		}
		_, _, err = rec.AcquireDone(ctx(t), in.key, in.ttl)
		if !errors.Is(err, errors.ErrUnsupported) {
			wantCode(t, "AcquireDone with "+in.desc, err, lock.CodeInvalidArgument)
		}
	}
}
