package locktest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// limitSizes are the n of the concurrency tests.
var limitSizes = []int{1, 3, 10}

func (s *suite) limitConcurrencyTests() []test {
	var tests []test
	for _, n := range limitSizes {
		tests = append(tests,
			test{fmt.Sprintf("Do with a wait, n=%d", n), limitTest(func(t *testing.T, lim lock.IDBackend) {
				s.testLimitConcurrency(t, lim, n, doSlot)
			})},
			test{fmt.Sprintf("AcquireSlot, n=%d", n), limitTest(func(t *testing.T, lim lock.IDBackend) {
				s.testLimitConcurrency(t, lim, n, spinSlot)
			})})
	}
	return tests
}

// slotRunner runs work while holding one of n slots of key, and returns
// the error of taking or releasing the slot.
type slotRunner func(ctx context.Context, lim lock.IDBackend, key string, n int, work func(lock.Lease)) error

// doSlot runs work under lock.Do with WithLimit(n), waiting in the
// backend's queue when it has one, polling (capped backoff) otherwise.
func doSlot(ctx context.Context, lim lock.IDBackend, key string, n int, work func(lock.Lease)) error {
	return lock.Do(ctx, lim, key, func(_ context.Context, l lock.Lease) error {
		work(l)
		return nil
	}, lock.WithLimit(n), lock.WithTTL(longTTL), lock.WithWait(mutexTimeout),
		lock.WithRetry(lock.Retry{MaxRetries: 1 << 30, BaseDelay: time.Millisecond, MaxDelay: spinMaxDelay}))
}

// spinSlot takes a slot with AcquireSlot, retrying contention with one
// lock id (see spin), runs work and releases the slot.
func spinSlot(ctx context.Context, lim lock.IDBackend, key string, n int, work func(lock.Lease)) error {
	id, err := lim.NewLockID(key)
	if err != nil {
		return err
	}
	l, err := spin(ctx, func() (lock.Lease, error) { return lim.AcquireSlot(ctx, key, id, n, longTTL) })
	if err != nil {
		return fmt.Errorf("AcquireSlot: %w", err)
	}
	work(l)
	return lim.Release(ctx, l.ID)
}

// testLimitConcurrency: mutexWorkers goroutines compete for n slots of one
// key, each until it has held one mutexRounds times. A counter of holders
// inside the critical section must never exceed n, every worker must
// finish, no two grants may share a fence, and for n = 1 each grant's
// fence must exceed the previous holder's.
func (s *suite) testLimitConcurrency(t *testing.T, lim lock.IDBackend, n int, run slotRunner) {
	key := s.key(t, "contended")
	withFences := fencing(lim)
	ctx, cancel := context.WithTimeout(context.Background(), mutexTimeout)
	defer cancel()

	var (
		occ    occupancy
		mu     sync.Mutex // guards the fields below; the backend gives the race detector no edges
		fences = map[lock.Fence]bool{}
		last   lock.Fence
	)
	work := func(l lock.Lease) {
		occ.enter()
		mu.Lock()
		if withFences {
			if fences[l.Fence] {
				t.Errorf("fence %s granted twice", l.Fence)
			}
			if n == 1 && len(fences) > 0 && l.Fence <= last {
				t.Errorf("fence %s after %s; with n=1 the fences of successive holders must increase", l.Fence, last)
			}
		}
		fences[l.Fence] = true
		last = l.Fence
		mu.Unlock()
		occ.leave()
	}
	contend(t, func() error { return run(ctx, lim, key, n, work) })
	if p := occ.peak.Load(); p > int32(n) {
		t.Errorf("%d holders inside the critical section at once, want at most n=%d", p, n)
	} else {
		t.Logf("peak %d holders of n=%d", p, n)
	}
	assertSlots(t, lim, key)
}
