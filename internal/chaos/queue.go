package chaos

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

var _ lock.Queuer = (*recorder)(nil)

// Join forwards to the backend's lock.Queuer, so workers wait in the key's
// queue and get the lock handed over by releases, as lock.Acquire does for
// users. The waiter records its attempts as Acquires, and a lease handed
// over as a grant once lock.Acquire took it (Leave(true)): a hand-off to a
// waiter that left is released by its Leave and, like the lease of an
// acquire whose outcome nobody learned, known to no check.
func (r *recorder) Join(key, id string, ttl, wait time.Duration) (lock.Waiter, error) {
	q, ok := r.Backend.(lock.Queuer)
	if !ok {
		return nil, fmt.Errorf("chaos: backend queues no waiters: %w", errors.ErrUnsupported)
	}
	next, err := q.Join(key, id, ttl, wait)
	if err != nil {
		return nil, err
	}
	return r.waiter(next, key, id, 0), nil
}

// waiter returns the recording waiter of next, a waiter with lock id id
// for key (for a slot of n when n > 0). A lease a release hands to id can
// be granted at any time from now on, and reported by Granted or by a
// later Attempt (one sent before the hand-off's message arrived finds the
// slot its own): either is recorded as an acquisition from now.
func (r *recorder) waiter(next lock.Waiter, key, id string, n int) lock.Waiter {
	w := &recWaiter{next: next, r: r, key: key, id: id, limit: n, call: time.Now().UnixNano(), ch: make(chan lock.Lease, 1), stop: make(chan struct{})}
	r.h.try(id, w.call)
	w.wg.Go(w.forward)
	return w
}

// recWaiter records the leases of a lock.Waiter.
type recWaiter struct {
	next  lock.Waiter
	r     *recorder
	key   string
	id    string
	limit int   // the n of a slot's waiter; 0 for the lock
	call  int64 // when the wait began
	ch    chan lock.Lease
	stop  chan struct{}
	wg    sync.WaitGroup

	mu     sync.Mutex
	handed lock.Lease // the last lease forwarded from next.Granted
}

func (w *recWaiter) forward() {
	for {
		select {
		case l := <-w.next.Granted():
			if l.ID != "" {
				w.mu.Lock()
				w.handed = l
				w.mu.Unlock()
			}
			select {
			case w.ch <- l:
			case <-w.stop:
				return
			}
		case <-w.stop:
			return
		}
	}
}

// Attempt is recorded as an Acquire.
func (w *recWaiter) Attempt(ctx context.Context) (lock.Lease, error) {
	return w.r.acquireID(ctx, w.key, w.id, w.limit, func() (lock.Lease, error) { return w.next.Attempt(ctx) })
}

// Granted is the forwarded channel of the wrapped waiter.
func (w *recWaiter) Granted() <-chan lock.Lease { return w.ch }

// Leave records a handed-over lease the caller took, then forwards.
func (w *recWaiter) Leave(took bool) {
	close(w.stop)
	w.wg.Wait()
	w.mu.Lock()
	l := w.handed
	w.mu.Unlock()
	if took && l.ID != "" {
		w.r.h.mu.Lock()
		known := w.r.h.byID[l.ID] != nil
		w.r.h.mu.Unlock()
		if !known {
			// Recorded as an acquire that took from the wait's start to
			// now, which is when the caller got the lease.
			_, _ = w.r.acquireAt(w.call, w.key, w.limit, l)
		}
	}
	w.next.Leave(took)
}
