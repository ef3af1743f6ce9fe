package lock_test

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// fakeBackend is an in-memory lock.Backend with none of the optional
// extensions, for the Do and Keep tests; it passes locktest.Run (see
// conformance_test.go). Leases expire by the wall clock; fences count per
// key. A hook can fail any call, and steal removes a lease as if it had
// expired or been taken over.
type fakeBackend struct {
	mu     sync.Mutex
	leases map[string]fakeLease // by normalised key
	keyOf  map[string]string    // lock id -> key
	fences map[string]uint64
	calls  map[string]int
	hook   func(ctx context.Context, method string) error
}

type fakeLease struct {
	id       string
	acquired time.Time
	expires  time.Time
	fence    lock.Fence
}

var _ lock.Backend = (*fakeBackend)(nil)

func newFake() *fakeBackend {
	return &fakeBackend{
		leases: map[string]fakeLease{},
		keyOf:  map[string]string{},
		fences: map[string]uint64{},
		calls:  map[string]int{},
	}
}

// setHook installs h, called (outside the fake's mutex) at the start of
// every method; a non-nil result is returned in place of the real work.
func (f *fakeBackend) setHook(h func(ctx context.Context, method string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = h
}

// count returns how many times method was called.
func (f *fakeBackend) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// steal deletes the lease on key, so its holder no longer holds it.
func (f *fakeBackend) steal(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if l, ok := f.leases[key]; ok {
		delete(f.keyOf, l.id)
		delete(f.leases, key)
	}
}

// held reports whether key has a live lease, without counting a call.
func (f *fakeBackend) held(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.leases[key]
	return ok && time.Now().Before(l.expires)
}

// enter counts a call of method, runs the hook, and then checks ctx as a
// conforming backend does: InvalidArgument for a nil one, Aborted
// (matching ctx.Err()) for one already done.
func (f *fakeBackend) enter(ctx context.Context, method string) error {
	f.mu.Lock()
	f.calls[method]++
	h := f.hook
	f.mu.Unlock()
	if ctx == nil {
		return lockdriver.InvalidArgument(method, "nil context")
	}
	if h != nil {
		if err := h(ctx, method); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return &lock.Error{Code: lock.CodeAborted, Op: method, Msg: "context done", Err: err}
	}
	return nil
}

// validTTL rejects what a store with millisecond expiry cannot keep.
func validTTL(op string, ttl time.Duration) error {
	if ttl.Milliseconds() <= 0 {
		return lockdriver.InvalidArgument(op, "ttl must be at least 1ms")
	}
	return nil
}

// live returns the live lease with id; the caller holds f.mu.
func (f *fakeBackend) live(id string) (string, fakeLease, error) {
	key, ok := f.keyOf[id]
	if !ok {
		return "", fakeLease{}, &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}
	}
	l := f.leases[key]
	if !time.Now().Before(l.expires) {
		delete(f.keyOf, id)
		delete(f.leases, key)
		return "", fakeLease{}, &lockdriver.NotHeldError{Reason: lockdriver.NotHeldExpired}
	}
	return key, l, nil
}

func (f *fakeBackend) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	if err := f.enter(ctx, "Acquire"); err != nil {
		return lock.Lease{}, err
	}
	return f.acquire(key, lockdriver.NewLockID(), ttl)
}

// acquire takes key for ttl under lock id id; a live lease with that id is
// returned as it is (the lock.IDBackend contract, see idbackend_test.go).
func (f *fakeBackend) acquire(key, id string, ttl time.Duration) (lock.Lease, error) {
	key, err := lockdriver.NormalizeKey(key)
	if err != nil {
		return lock.Lease{}, err
	}
	if err := validTTL("acquire", ttl); err != nil {
		return lock.Lease{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if l, ok := f.leases[key]; ok {
		if now.Before(l.expires) && l.id == id {
			return lock.Lease{Key: key, ID: id, Fence: l.fence, TTL: ttl, ExpiresAt: l.expires}, nil
		}
		if now.Before(l.expires) {
			return lock.Lease{}, &lock.LockedError{ExpiresAt: l.expires}
		}
		delete(f.keyOf, l.id)
	}
	f.fences[key]++
	fence, err := lockdriver.FormatFence(f.fences[key])
	if err != nil {
		return lock.Lease{}, err
	}
	l := fakeLease{id: id, acquired: now, expires: now.Add(ttl), fence: fence}
	f.leases[key] = l
	f.keyOf[l.id] = key
	return lock.Lease{Key: key, ID: l.id, Fence: fence, TTL: ttl, ExpiresAt: l.expires}, nil
}

func (f *fakeBackend) Release(ctx context.Context, id string) error {
	if err := f.enter(ctx, "Release"); err != nil {
		return err
	}
	if err := lockdriver.ValidateLockID(id); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key, _, err := f.live(id)
	if err != nil {
		return err
	}
	delete(f.keyOf, id)
	delete(f.leases, key)
	return nil
}

func (f *fakeBackend) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	if err := f.enter(ctx, "Extend"); err != nil {
		return time.Time{}, err
	}
	if err := lockdriver.ValidateLockID(id); err != nil {
		return time.Time{}, err
	}
	if err := validTTL("extend", ttl); err != nil {
		return time.Time{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key, l, err := f.live(id)
	if err != nil {
		return time.Time{}, err
	}
	l.expires = time.Now().Add(ttl)
	f.leases[key] = l
	return l.expires, nil
}

func (f *fakeBackend) IsLocked(ctx context.Context, key string) (bool, error) {
	if err := f.enter(ctx, "IsLocked"); err != nil {
		return false, err
	}
	key, err := lockdriver.NormalizeKey(key)
	if err != nil {
		return false, err
	}
	return f.held(key), nil
}

func (f *fakeBackend) LookupKey(ctx context.Context, key string) (*lock.Info, error) {
	if err := f.enter(ctx, "LookupKey"); err != nil {
		return nil, err
	}
	key, err := lockdriver.NormalizeKey(key)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.leases[key]
	if !ok || !time.Now().Before(l.expires) {
		return nil, nil
	}
	return info(key, l), nil
}

func (f *fakeBackend) LookupID(ctx context.Context, id string) (*lock.Info, error) {
	if err := f.enter(ctx, "LookupID"); err != nil {
		return nil, err
	}
	if err := lockdriver.ValidateLockID(id); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	key, l, err := f.live(id)
	if err != nil {
		return nil, nil
	}
	return info(key, l), nil
}

func (f *fakeBackend) Capabilities() lock.Capabilities {
	return lock.Capabilities{Backend: "fake", Fencing: true, TimeAuthority: "client"}
}

func info(key string, l fakeLease) *lock.Info {
	return &lock.Info{
		KeyHash:    lockdriver.HashKey(key),
		IDHash:     lockdriver.HashKey(l.id),
		Fence:      l.fence,
		AcquiredAt: l.acquired,
		ExpiresAt:  l.expires,
	}
}

// acquireTimes records when f's Acquire is called (it sets f's hook); the
// returned function reads the times so far.
func acquireTimes(f *fakeBackend) func() []time.Time {
	var mu sync.Mutex
	var at []time.Time
	f.setHook(func(_ context.Context, method string) error {
		if method == "Acquire" {
			mu.Lock()
			at = append(at, time.Now())
			mu.Unlock()
		}
		return nil
	})
	return func() []time.Time {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(at)
	}
}
