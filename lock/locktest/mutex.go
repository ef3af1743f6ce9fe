package locktest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Contention test size: every worker must win the key this many times.
const (
	mutexWorkers = 50
	mutexRounds  = 3
	mutexTimeout = 60 * time.Second
	spinMaxDelay = 64 * time.Millisecond
)

func (s *suite) mutexTests() []test {
	return []test{
		{"contention returns ErrLocked", s.testContention},
		{"50 goroutines never hold one key together", s.testMutualExclusion},
	}
}

// testContention: a second Acquire of a held key is refused with ErrLocked,
// not a system error, and changes nothing.
func (s *suite) testContention(t *testing.T, b lock.Backend) {
	key := s.key(t, "busy")
	l := mustAcquire(t, b, key, longTTL)
	_, err := b.Acquire(ctx(t), key, longTTL)
	if !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("second Acquire of a held key: %v, want an error matching lock.ErrLocked", err)
	}
	if c := lock.CodeOf(err); c != "" {
		t.Errorf("second Acquire: error has code %s; contention is not a system failure", c)
	}
	var le *lock.LockedError
	if errors.As(err, &le) && !le.ExpiresAt.IsZero() && !near(le.ExpiresAt, l.ExpiresAt, time.Millisecond) {
		t.Errorf("LockedError.ExpiresAt = %v, want the holder's expiry %v (or zero)", le.ExpiresAt, l.ExpiresAt)
	}
	assertHeld(t, b, l)
	mustRelease(t, b, l)
	assertFree(t, b, key)
}

// testMutualExclusion: mutexWorkers goroutines compete for one key, each
// until it has held it mutexRounds times. A counter of holders inside the
// critical section must never exceed one, every worker must finish, and
// (with fencing) each grant's fence must exceed the previous grant's.
func (s *suite) testMutualExclusion(t *testing.T, b lock.Backend) {
	key := s.key(t, "contended")
	withFences := fencing(b)
	ctx, cancel := context.WithTimeout(context.Background(), mutexTimeout)
	defer cancel()

	var (
		occ    occupancy
		mu     sync.Mutex // guards the fields below; the lock under test gives the race detector no edges
		last   lock.Fence
		grants int
	)
	contend(t, func() error {
		l, err := acquireSpin(ctx, b, key)
		if err != nil {
			return fmt.Errorf("Acquire: %w", err)
		}
		occ.enter()
		mu.Lock()
		if withFences && grants > 0 && l.Fence <= last {
			t.Errorf("fence %s after %s; fences of successive grants must increase", l.Fence, last)
		}
		last = l.Fence
		grants++
		mu.Unlock()
		occ.leave()
		if err := b.Release(ctx, l.ID); err != nil {
			return fmt.Errorf("Release: %w", err)
		}
		return nil
	})
	if p := occ.peak.Load(); p > 1 {
		t.Errorf("%d holders inside the critical section at once, want 1", p)
	}
	if grants != mutexWorkers*mutexRounds {
		t.Errorf("%d grants, want %d", grants, mutexWorkers*mutexRounds)
	}
	assertFree(t, b, key)
}

// contend runs mutexWorkers goroutines, each calling round mutexRounds
// times, and fails the test for every worker whose round failed (it then
// stops).
func contend(t *testing.T, round func() error) {
	t.Helper()
	var wg sync.WaitGroup
	for w := range mutexWorkers {
		wg.Go(func() {
			for i := range mutexRounds {
				if err := round(); err != nil {
					t.Errorf("worker %d, round %d: %v", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// occupancy counts the holders inside a critical section.
type occupancy struct {
	inside atomic.Int32 // holders now inside
	peak   atomic.Int32 // most holders inside at once
}

// enter counts a holder in; it then works a little (100µs), so that
// overlapping holders have room to show.
func (o *occupancy) enter() {
	cur := o.inside.Add(1)
	for p := o.peak.Load(); cur > p && !o.peak.CompareAndSwap(p, cur); p = o.peak.Load() {
	}
	time.Sleep(100 * time.Microsecond)
}

// leave counts a holder out.
func (o *occupancy) leave() { o.inside.Add(-1) }

// acquireSpin acquires key, retrying on contention until ctx ends (see
// spin).
func acquireSpin(ctx context.Context, b lock.Backend, key string) (lock.Lease, error) {
	return spin(ctx, func() (lock.Lease, error) { return b.Acquire(ctx, key, longTTL) })
}

// spin calls try until it does not fail with contention or ctx ends. The
// sleep between attempts starts tiny and doubles up to spinMaxDelay, with
// jitter, so the losers do not crowd out the holder's Release on a slow
// store.
func spin(ctx context.Context, try func() (lock.Lease, error)) (lock.Lease, error) {
	delay := time.Millisecond
	for {
		l, err := try()
		if !errors.Is(err, lock.ErrLocked) {
			return l, err
		}
		select {
		case <-ctx.Done():
			return lock.Lease{}, ctx.Err()
		case <-time.After(delay/2 + rand.N(delay/2+1)):
		}
		delay = min(2*delay, spinMaxDelay)
	}
}
