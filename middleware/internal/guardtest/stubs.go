package guardtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// The backends of the adapters' own tests: stubs for those that need no
// Redis, and NewBackend for those that do.

// NopBackend is a non-nil lock.Backend for configuration tests; it is
// never called.
type NopBackend struct{ lock.Backend }

// NopRecorder is a lock.Recorder (not a lock.IDBackend) for configuration
// tests; it is never called.
type NopRecorder struct{ lock.Recorder }

// NopLimiter is a lock.IDBackend and a lock.Recorder for configuration
// tests; it is never called.
type NopLimiter struct{ fullBackend }

// Capabilities are those of a backend with striped fences: the stubs'
// embedded interfaces are nil, and the adapters read this when built.
func (NopBackend) Capabilities() lock.Capabilities { return nopCaps }

// Capabilities: see NopBackend's.
func (NopRecorder) Capabilities() lock.Capabilities { return nopCaps }

// Capabilities: see NopBackend's.
func (NopLimiter) Capabilities() lock.Capabilities { return nopCaps }

var nopCaps = lock.Capabilities{Backend: "nop", Fencing: true, TimeAuthority: "server"}

// fullBackend is a backend with both extensions.
type fullBackend interface {
	lock.IDBackend
	lock.Recorder
}

// Failing is a plain lock.Backend that answers every Acquire with Err.
type Failing struct {
	lock.Backend
	Err error
}

// Acquire returns b.Err.
func (b Failing) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, b.Err
}

// FailingIDs is a lock.IDBackend that answers every acquisition, of a key,
// of a slot or with a lock id, with Err.
type FailingIDs struct {
	lock.IDBackend
	Err error
}

// Acquire returns b.Err.
func (b FailingIDs) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, b.Err
}

// AcquireSlot returns b.Err.
func (b FailingIDs) AcquireSlot(context.Context, string, string, int, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, b.Err
}

// AcquireID returns b.Err.
func (b FailingIDs) AcquireID(context.Context, string, string, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, b.Err
}

// NewLockID returns a new lock id.
func (b FailingIDs) NewLockID(string) (string, error) { return lockdriver.NewLockID(), nil }

// Release lets lock's clean-up of an attempt that failed go through.
func (b FailingIDs) Release(context.Context, string) error { return nil }

// Join says the waiter cannot be told of hand-offs: lock.Acquire polls.
func (b FailingIDs) Join(string, string, int, time.Duration, time.Duration) (lock.Waiter, error) {
	return nil, errors.ErrUnsupported
}

// KeyRecorder records the key of each Acquire in Keys and fails it, so no
// lease is taken.
type KeyRecorder struct {
	lock.Backend
	Keys []string
}

// Acquire records key and returns a ServiceUnavailable error.
func (b *KeyRecorder) Acquire(_ context.Context, key string, _ time.Duration) (lock.Lease, error) {
	b.Keys = append(b.Keys, key)
	return lock.Lease{}, &lock.Error{Code: lock.CodeServiceUnavailable, Op: "acquire"}
}

// NewBackend returns a Backend on the shared test Redis under a key prefix
// of the test's own (redistest.Prefix).
func NewBackend(t testing.TB) *redisbackend.Backend {
	t.Helper()
	b, err := redisbackend.New(redistest.Shared(t).Client(t), &redisbackend.Options{Prefix: redistest.Prefix(t), FenceStripes: redisbackend.DefaultFenceStripes})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
