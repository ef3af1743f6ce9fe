package locktest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// BadLimitInputs returns every invalid call of the limit suite (see
// [RunLimit]): n outside [1, lockdriver.MaxLimit] through lock.Acquire, lock.Do
// and lock.Hold, n outside [1, lockdriver.MaxLimit] for AcquireSlot and outside
// [0, lockdriver.MaxLimit] for Join (whose n 0 is the lock), and a bad key, ttl,
// lock id or nil context for AcquireSlot and LookupLimit. A conforming
// lock.IDBackend fails each with an error whose lock.CodeOf is
// lock.CodeInvalidArgument, before any I/O. key is a valid key; nothing is
// taken when the backend conforms. Called on a backend that is not a
// lock.IDBackend, the lock.Acquire, Do and Hold calls fail InvalidArgument
// (WithLimit needs the extension) and the calls of the extension's methods
// fail with a plain error (no code), so that such a backend does not pass.
func BadLimitInputs(key string) []BadInput {
	id := lockdriver.NewLockID() // well-formed, never granted
	var nilCtx context.Context
	var in badInputs
	in.limits(key, id)
	in.slotArgs(key, id)
	in.add("AcquireSlot/nil context", limiter(func(lim lock.IDBackend) error {
		_, err := lim.AcquireSlot(nilCtx, key, id, 2, badTTL)
		return err
	}))
	in.add("LookupLimit/nil context", limiter(func(lim lock.IDBackend) error {
		_, err := lim.LookupLimit(nilCtx, key)
		return err
	}))
	return in
}

// limiter calls f with b as a lock.IDBackend.
func limiter(f func(lock.IDBackend) error) func(lock.Backend) error {
	return func(b lock.Backend) error {
		lim, ok := b.(lock.IDBackend)
		if !ok {
			return fmt.Errorf("locktest: %T is not a lock.IDBackend", b)
		}
		return f(lim)
	}
}

// limits adds the calls with an n out of range, through lock and on the
// IDBackend, on key with lock id id.
func (in *badInputs) limits(key, id string) {
	bg := context.Background()
	for _, n := range []int{0, -1, lockdriver.MaxLimit + 1} {
		ns := strconv.Itoa(n)
		opts := []lock.Option{lock.WithLimit(n), lock.WithWait(0), lock.WithTTL(badTTL)}
		in.add("lock.Acquire/WithLimit("+ns+")", func(b lock.Backend) error {
			_, err := lock.Acquire(bg, b, key, opts...)
			return err
		})
		in.add("lock.Do/WithLimit("+ns+")", func(b lock.Backend) error {
			return lock.Do(bg, b, key, func(context.Context, lock.Lease) error {
				return errors.New("locktest: fn ran with an invalid limit")
			}, opts...)
		})
		in.add("lock.Hold/WithLimit("+ns+")", func(b lock.Backend) error {
			_, _, release, err := lock.Hold(bg, b, key, opts...)
			if release != nil {
				_ = release()
			}
			return err
		})
		in.add("AcquireSlot/n/"+ns, limiter(func(lim lock.IDBackend) error {
			_, err := lim.AcquireSlot(bg, key, id, n, badTTL)
			return err
		}))
		if n == 0 {
			continue // Join's n 0 is the lock
		}
		in.add("Join/n/"+ns, limiter(func(q lock.IDBackend) error {
			w, err := q.Join(key, id, n, badTTL, badTTL)
			if w != nil {
				w.Leave(false)
			}
			return err
		}))
	}
}

// slotArgs adds the slot calls with a bad key, TTL or lock id.
func (in *badInputs) slotArgs(key, id string) {
	bg := context.Background()
	for _, k := range []struct{ desc, key string }{{"empty", ""}, {"invalid UTF-8", "\xff\xfe"}, {"513 bytes", padKey("k", lockdriver.MaxKeyBytes+1)}} {
		in.add("AcquireSlot/key/"+k.desc, limiter(func(lim lock.IDBackend) error {
			_, err := lim.AcquireSlot(bg, k.key, id, 2, badTTL)
			return err
		}))
		in.add("LookupLimit/key/"+k.desc, limiter(func(lim lock.IDBackend) error {
			_, err := lim.LookupLimit(bg, k.key)
			return err
		}))
	}
	for _, d := range []time.Duration{0, -time.Second, 999 * time.Microsecond} {
		in.add("AcquireSlot/ttl/"+d.String(), limiter(func(lim lock.IDBackend) error {
			_, err := lim.AcquireSlot(bg, key, id, 2, d)
			return err
		}))
	}
	for _, bad := range []struct{ desc, id string }{{"empty", ""}, {"21 chars", id[:21]}, {"with /", "/" + id[1:]}} {
		in.add("AcquireSlot/id/"+bad.desc, limiter(func(lim lock.IDBackend) error {
			_, err := lim.AcquireSlot(bg, key, bad.id, 2, badTTL)
			return err
		}))
	}
}

func (s *suite) limitValidationTests() []test {
	return []test{
		{"bad input fails InvalidArgument", limitTest(s.testLimitBadInputs)},
		{"n = 1 and n = MaxLimit are accepted", limitTest(s.testLimitBounds)},
		{"cancelled context gives Aborted", limitTest(s.testLimitCancelled)},
	}
}

// testLimitBadInputs: every BadLimitInputs call fails InvalidArgument (not
// contention, not not-held), and none of them took a slot.
func (s *suite) testLimitBadInputs(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "valid")
	wantInvalid(t, lim, BadLimitInputs(key))
	assertSlots(t, lim, key)
	assertFree(t, lim, key)
}

// testLimitBounds: the smallest and largest n are valid limits, through
// AcquireSlot and lock.Acquire.
func (s *suite) testLimitBounds(t *testing.T, lim lock.IDBackend) {
	for _, n := range []int{1, lockdriver.MaxLimit} {
		key := s.key(t, "n"+strconv.Itoa(n))
		a := mustSlot(t, lim, key, n, longTTL)
		b, err := lock.Acquire(ctx(t), lim, key, lock.WithLimit(n), lock.WithWait(0), lock.WithTTL(longTTL))
		if n == 1 {
			if !errors.Is(err, lock.ErrLocked) {
				t.Errorf("lock.Acquire(WithLimit(1)) of a held slot: %v, want an error matching lock.ErrLocked", err)
			}
			releaseAll(t, lim, key, a)
			continue
		}
		if err != nil {
			t.Fatalf("lock.Acquire(WithLimit(%d)): %v", n, err)
		}
		assertSlots(t, lim, key, a, b)
		releaseAll(t, lim, key, a, b)
	}
}

// testLimitCancelled: AcquireSlot and LookupLimit with a cancelled
// context fail Aborted, matching context.Canceled, and take nothing.
func (s *suite) testLimitCancelled(t *testing.T, lim lock.IDBackend) {
	key := s.key(t, "k")
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := lim.AcquireSlot(cctx, key, newSlotID(t, lim, key), 2, longTTL)
	wantCode(t, "AcquireSlot", err, lock.CodeAborted)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("AcquireSlot: %v does not match context.Canceled", err)
	}
	_, err = lim.LookupLimit(cctx, key)
	wantCode(t, "LookupLimit", err, lock.CodeAborted)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("LookupLimit: %v does not match context.Canceled", err)
	}
	assertSlots(t, lim, key)
}
