package locktest

import (
	"context"
	"errors"
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
		inside   atomic.Int32 // holders now in the critical section
		overlaps atomic.Int32 // entries that found another holder inside
		mu       sync.Mutex   // guards the fields below; the lock under test gives the race detector no edges
		last     lock.Fence
		grants   int
		finished = make([]int, mutexWorkers)
		wg       sync.WaitGroup
	)
	for w := range mutexWorkers {
		wg.Go(func() {
			for range mutexRounds {
				l, err := acquireSpin(ctx, b, key)
				if err != nil {
					t.Errorf("worker %d: Acquire: %v", w, err)
					return
				}
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				mu.Lock()
				if withFences && grants > 0 && l.Fence <= last {
					t.Errorf("worker %d: fence %s after %s; fences of successive grants must increase", w, l.Fence, last)
				}
				last = l.Fence
				grants++
				mu.Unlock()
				time.Sleep(100 * time.Microsecond) // the "work", so overlaps have room to show
				inside.Add(-1)
				if err := b.Release(ctx, l.ID); err != nil {
					t.Errorf("worker %d: Release: %v", w, err)
					return
				}
				mu.Lock()
				finished[w]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if n := overlaps.Load(); n != 0 {
		t.Errorf("%d grants found another holder inside the critical section, want 0", n)
	}
	for w, n := range finished {
		if n != mutexRounds {
			t.Errorf("worker %d finished %d rounds, want %d", w, n, mutexRounds)
		}
	}
	if grants != mutexWorkers*mutexRounds {
		t.Errorf("%d grants, want %d", grants, mutexWorkers*mutexRounds)
	}
	assertFree(t, b, key)
}

// acquireSpin acquires key, retrying on contention until ctx ends. The
// sleep between attempts starts tiny and doubles up to spinMaxDelay, with
// jitter, so the losers do not crowd out the holder's Release on a slow
// store.
func acquireSpin(ctx context.Context, b lock.Backend, key string) (lock.Lease, error) {
	delay := time.Millisecond
	for {
		l, err := b.Acquire(ctx, key, longTTL)
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
