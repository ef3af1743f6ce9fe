package multilock

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Backend is the optional extension of a lock.IDBackend that takes the
// keys of one group in one step: on Redis, one script call. Group,
// AcquireMulti and ReleaseMulti validate their input before any I/O, as
// every Backend method does.
type Backend interface {
	lock.IDBackend
	// Group returns the group of key: AcquireMulti takes keys of one
	// group together. Groups are ordered by their names.
	Group(key string) (string, error)
	// AcquireMulti tries once to take every key of one group, keys[i]
	// with the lock id ids[i] (from NewLockID(keys[i])), all or none.
	// A key whose live lease has its id counts as taken, so the call is
	// safe to repeat, as AcquireID is. On contention it takes nothing
	// and returns a *BusyError. One that cannot take them in one step
	// returns an error matching errors.ErrUnsupported, taking nothing;
	// the keys are then taken one by one with AcquireID.
	AcquireMulti(ctx context.Context, keys, ids []string, ttl time.Duration) ([]lock.Lease, error)
	// ReleaseMulti releases the leases ids together, one error per id,
	// each as Release would return it.
	ReleaseMulti(ctx context.Context, ids []string) []error
}

// BusyError is the contention of AcquireMulti: keys[Index] is the first
// busy key, in the order given. It matches lock.ErrLocked and unwraps to
// a *lock.LockedError with its holder's expiry.
type BusyError struct {
	Index     int
	ExpiresAt time.Time // the holder's expiry, when known
}

// Error implements error.
func (e *BusyError) Error() string { return lock.ErrLocked.Error() + " (a key of the group)" }

// Unwrap returns the *lock.LockedError of the busy key.
func (e *BusyError) Unwrap() error { return &lock.LockedError{ExpiresAt: e.ExpiresAt} }

// store is what Do and Hold use of a backend: b itself, for Keep and the
// waits of lock.Acquire, so that its hooks see them; its IDBackend; multi,
// the Backend under b's hooks, or nil when there is none; and the
// wrappers above multi (lock.WithHooks), outermost first, whose hooks see
// its operations.
type store struct {
	b      lock.Backend
	id     lock.IDBackend
	multi  Backend
	layers []lock.Backend
}

// newStore returns the store of b, or an InvalidArgument error unless b is
// a lock.IDBackend.
func newStore(op string, b lock.Backend) (store, error) {
	id, ok := b.(lock.IDBackend)
	if !ok {
		err := lockdriver.InvalidArgument(op, "a multi-key lock needs a lock.IDBackend (caller-chosen lock ids)")
		err.Err = errors.ErrUnsupported
		return store{}, err
	}
	s := store{b: b, id: id}
	for x := b; x != nil; {
		if m, ok := x.(Backend); ok {
			s.multi = m
			break
		}
		u, ok := x.(interface{ Unwrap() lock.Backend })
		if !ok {
			break
		}
		s.layers = append(s.layers, x)
		x = u.Unwrap()
	}
	if s.multi == nil {
		// Without one, the operations' inner calls (AcquireID, Release)
		// go through b and so through every hook already.
		s.layers = []lock.Backend{b}
	}
	return s, nil
}

// emit runs op through the hooks of every layer from the i-th in, then
// call.
func (s store) emit(ctx context.Context, i int, op *lock.Op, call lock.OpFunc) error {
	if i == len(s.layers) {
		return call(ctx, op)
	}
	return lock.Emit(ctx, s.layers[i], op, func(ctx context.Context, op *lock.Op) error {
		return s.emit(ctx, i+1, op, call)
	})
}

// group returns the group of a normalised key: the backend's, or on a
// backend without groups the key itself, taken alone.
func (s store) group(key string) (string, error) {
	if s.multi == nil {
		return key, nil
	}
	return s.multi.Group(key)
}

// acquire makes one attempt on the keys of one group, as an
// lock.OpAcquireMulti of b's hooks. held[i] is the lease the caller holds
// on keys[i] already (with the id ids[i]), or a zero Lease. What a failed
// attempt took is released within releaseTimeout.
func (s store) acquire(ctx context.Context, keys, ids []string, held []lock.Lease, ttl, releaseTimeout time.Duration) ([]lock.Lease, error) {
	op := &lock.Op{Kind: lock.OpAcquireMulti, Keys: keys, IDs: ids, TTL: ttl}
	err := s.emit(ctx, 0, op, func(ctx context.Context, op *lock.Op) (err error) {
		if s.multi != nil {
			op.Leases, err = s.multi.AcquireMulti(ctx, keys, ids, ttl)
			if !errors.Is(err, errors.ErrUnsupported) {
				return err
			}
		}
		op.Leases, err = s.acquireEach(ctx, keys, ids, held, ttl, releaseTimeout)
		return err
	})
	return op.Leases, err
}

// acquireEach is AcquireMulti on a backend without it: AcquireID per key
// not held yet, in order, releasing what it took when one fails (within
// releaseTimeout, waiting no longer than ctx).
func (s store) acquireEach(ctx context.Context, keys, ids []string, held []lock.Lease, ttl, releaseTimeout time.Duration) ([]lock.Lease, error) {
	leases := make([]lock.Lease, len(keys))
	var took []lock.Lease
	for i, key := range keys {
		if held[i].ID != "" {
			leases[i] = held[i]
			continue
		}
		l, err := s.id.AcquireID(ctx, key, ids[i], ttl)
		if err != nil {
			var le *lock.LockedError
			if errors.As(err, &le) {
				err = &BusyError{Index: i, ExpiresAt: le.ExpiresAt}
			} else {
				// The attempt may have taken the key: release its id too.
				took = append(took, lock.Lease{Key: key, ID: ids[i], TTL: ttl})
			}
			s.releaseWithin(ctx, took, releaseTimeout)
			return nil, err
		}
		leases[i] = l
		took = append(took, l)
	}
	return leases, nil
}

// releaseWithin releases leases under a context of their own that ends
// after timeout, and waits for the release until ctx ends: a call returns
// by its deadline, as lock.Acquire does, while the release goes on in the
// background (it may have to outlast a deadline that already passed).
func (s store) releaseWithin(ctx context.Context, leases []lock.Lease, timeout time.Duration) {
	if len(leases) == 0 {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		s.release(rctx, leases)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// release releases leases together, as an lock.OpReleaseMulti of b's
// hooks, and returns one error per lease.
func (s store) release(ctx context.Context, leases []lock.Lease) []error {
	if len(leases) == 0 {
		return nil
	}
	ids := make([]string, len(leases))
	for i, l := range leases {
		ids[i] = l.ID
	}
	op := &lock.Op{Kind: lock.OpReleaseMulti, Leases: leases}
	var errs []error
	err := s.emit(ctx, 0, op, func(ctx context.Context, op *lock.Op) error {
		if s.multi != nil {
			errs = s.multi.ReleaseMulti(ctx, ids)
		} else {
			errs = make([]error, len(ids))
			for i, id := range ids {
				errs[i] = s.id.Release(ctx, id)
			}
		}
		op.Results = make([]lock.ExtendResult, len(errs))
		for i, err := range errs {
			op.Results[i].Err = err
		}
		return errors.Join(errs...)
	})
	if len(errs) != len(ids) {
		errs = make([]error, len(ids))
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}
