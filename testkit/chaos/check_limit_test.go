package chaos

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

func TestCheckLimit(t *testing.T) {
	ok := []Grant{
		{Key: "s", Limit: 2, Fence: "000000000000001", AcquiredMs: 100, ExpiresMs: 600},
		{Key: "s", Limit: 2, Fence: "000000000000002", AcquiredMs: 200, ExpiresMs: 700},
		{Key: "s", Limit: 2, Fence: "000000000000003", AcquiredMs: 600, ExpiresMs: 1100},                          // as the first ends
		{Key: "s", Limit: 2, Fence: "000000000000004", AcquiredMs: 700, ExpiresMs: 1200, ReleaseCallNs: 750 * ms}, // as the second ends
		{Key: "s", Limit: 2, Fence: "000000000000005", AcquiredMs: 750, ExpiresMs: 1250},                          // as the fourth is released
		// Locks are CheckOverlap's, even overlapping ones.
		{Key: "k", Fence: "000000000000001", AcquiredMs: 100, ExpiresMs: 600},
		{Key: "k", Fence: "000000000000002", AcquiredMs: 200, ExpiresMs: 700},
		{Key: "k", Fence: "000000000000003", AcquiredMs: 300, ExpiresMs: 800},
	}
	if vs, most := CheckLimit(ok); len(vs) != 0 || most != 2 {
		t.Errorf("CheckLimit(within the limit) = %v, %d holders; want none, 2", vs, most)
	}
	bad := []Grant{
		{Key: "s", Limit: 2, Fence: "000000000000001", AcquiredMs: 100, ExpiresMs: 600},
		{Key: "s", Limit: 2, Fence: "000000000000002", AcquiredMs: 200, ExpiresMs: 700},
		{Key: "s", Limit: 2, Fence: "000000000000003", AcquiredMs: 590, ExpiresMs: 1100}, // 10 ms before the first ends
	}
	if vs, most := CheckLimit(bad); len(vs) != 1 || vs[0].Check != KindLimit || most != 3 {
		t.Errorf("CheckLimit(3 of 2) = %v, %d holders; want 1 violation, 3", vs, most)
	}
	if vs, _ := CheckOverlap(bad); len(vs) != 0 {
		t.Errorf("CheckOverlap(slots) = %v, want none: slots are CheckLimit's", vs)
	}
}

// TestCheckLimitBrokenBackend runs workers through the recorder on an
// in-memory lock.IDBackend, once honest and once granting 3 slots of a
// limit of 2: the honest run passes every check of a limit, the broken one
// fails CheckLimit and the linearizability check.
func TestCheckLimitBrokenBackend(t *testing.T) {
	for _, tt := range []struct {
		desc   string
		grants int // slots the fake grants, whatever n
		broken bool
	}{
		{desc: "honest", grants: 2},
		{desc: "grants 3 of 2", grants: 3, broken: true},
	} {
		t.Run(tt.desc, func(t *testing.T) {
			fake := &slotFake{grants: tt.grants, slots: map[string]slotLease{}}
			h := NewHistory()
			var wg sync.WaitGroup
			for w := range 6 {
				b := h.Backend(fake, w)
				wg.Go(func() {
					for range 5 {
						err := lock.Do(context.Background(), b, "s", func(context.Context, lock.Lease) error {
							time.Sleep(20 * time.Millisecond)
							return nil
						}, lock.WithLimit(2), lock.WithTTL(5*time.Second), lock.WithWait(5*time.Second),
							lock.WithRetry(lock.Retry{MaxRetries: 10000, BaseDelay: 2 * time.Millisecond}))
						if err != nil {
							t.Error(err)
						}
					}
				})
			}
			wg.Wait()
			grants := h.Grants()
			if len(grants) != 30 || grants[0].Limit != 2 {
				t.Fatalf("recorded %d grants, want 30 of limit 2: %+v", len(grants), grants)
			}
			vs, most := CheckLimit(grants)
			lin := CheckLinearizable(h.Ops(), grants, 10*time.Second)
			fenceVs := CheckFenceOrder(grants)
			if tt.broken {
				if len(vs) == 0 || most != 3 {
					t.Errorf("CheckLimit = %v, %d holders at most; want violations, 3", vs, most)
				}
				if lin.Result != porcupine.Illegal || len(lin.IllegalKeys) != 1 || lin.IllegalKeys[0] != lockdriver.HashKey("s") {
					t.Errorf("linearizability: got %v on keys %v, want illegal on s", lin.Result, lin.IllegalKeys)
				}
				if !bytes.Contains(lin.Visualization, []byte("<html")) {
					t.Errorf("no HTML view of the illegal history (%d bytes)", len(lin.Visualization))
				}
			} else {
				if len(vs) != 0 || most != 2 {
					t.Errorf("CheckLimit = %v, %d holders at most; want none, 2", vs, most)
				}
				if lin.Result != porcupine.Ok || lin.Visualization != nil {
					t.Errorf("linearizability: got %v (view: %d bytes), want ok and no view", lin.Result, len(lin.Visualization))
				}
			}
			if len(fenceVs) != 0 {
				t.Errorf("CheckFenceOrder = %v, want none", fenceVs)
			}
		})
	}
}

// slotFake is an in-memory lock.IDBackend for one process, the time
// authority being the local clock, with slots only (no lock, no queue:
// lock.Acquire polls). It grants up to grants slots of a key whatever the
// n asked for: with grants above n it breaks the limit.
type slotFake struct {
	mu     sync.Mutex
	grants int
	fence  uint64
	slots  map[string]slotLease // by lock id
}

var _ lock.IDBackend = (*slotFake)(nil)

type slotLease struct {
	key     string
	fence   lock.Fence
	expires time.Time
}

func (f *slotFake) NewLockID(string) (string, error) { return lockdriver.NewLockID(), nil }

func (f *slotFake) AcquireSlot(_ context.Context, key, id string, _ int, ttl time.Duration) (lock.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	live := 0
	var first time.Time
	for sid, s := range f.slots {
		switch {
		case !s.expires.After(now):
			delete(f.slots, sid)
		case s.key == key:
			live++
			if first.IsZero() || s.expires.Before(first) {
				first = s.expires
			}
		}
	}
	if s, ok := f.slots[id]; ok {
		return lock.Lease{Key: key, ID: id, Fence: s.fence, TTL: ttl, ExpiresAt: s.expires}, nil
	}
	if live >= f.grants {
		return lock.Lease{}, &lock.LockedError{ExpiresAt: first}
	}
	f.fence++
	fence, _ := lockdriver.FormatFence(f.fence)
	s := slotLease{key: key, fence: fence, expires: now.Add(ttl)}
	f.slots[id] = s
	return lock.Lease{Key: key, ID: id, Fence: fence, TTL: ttl, ExpiresAt: s.expires}, nil
}

func (f *slotFake) LookupLimit(context.Context, string) (*lock.LimitInfo, error) {
	return nil, errors.ErrUnsupported
}

func (f *slotFake) AcquireID(context.Context, string, string, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, errors.ErrUnsupported
}

func (f *slotFake) Join(string, string, int, time.Duration, time.Duration) (lock.Waiter, error) {
	return nil, errors.ErrUnsupported
}

func (f *slotFake) ExtendBatch(ctx context.Context, reqs []lock.Lease) []lock.ExtendResult {
	res := make([]lock.ExtendResult, len(reqs))
	for i, q := range reqs {
		res[i].ExpiresAt, res[i].Err = f.Extend(ctx, q.ID, q.TTL)
	}
	return res
}

func (f *slotFake) Acquire(context.Context, string, time.Duration) (lock.Lease, error) {
	return lock.Lease{}, errors.ErrUnsupported
}

func (f *slotFake) Release(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.slots[id]; !ok {
		return lock.ErrNotHeld
	}
	delete(f.slots, id)
	return nil
}

func (f *slotFake) Extend(_ context.Context, id string, ttl time.Duration) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.slots[id]
	if !ok {
		return time.Time{}, lock.ErrNotHeld
	}
	s.expires = time.Now().Add(ttl)
	f.slots[id] = s
	return s.expires, nil
}

func (f *slotFake) IsLocked(context.Context, string) (bool, error) { return false, nil }

func (f *slotFake) LookupKey(context.Context, string) (*lock.Info, error) { return nil, nil }

func (f *slotFake) LookupID(context.Context, string) (*lock.Info, error) { return nil, nil }

func (f *slotFake) Capabilities() lock.Capabilities {
	return lock.Capabilities{Backend: "fake", Fencing: true, TimeAuthority: "client"}
}
