package lock

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// schedulers holds the running scheduler of each IDBackend. A
// scheduler removes itself (under mu) when it has no lease left, and is
// started again by the next Keep.
var schedulers struct {
	mu sync.Mutex
	m  map[IDBackend]*scheduler
}

// batchable reports whether be can key the scheduler registry (a value
// that cannot be a map key keeps the per-lease heartbeat).
func batchable(be IDBackend) bool {
	return contract.MapKey(be)
}

// keepBatched registers k with the scheduler of be and returns Keep's
// stop function.
func keepBatched(ctx context.Context, be IDBackend, k *keeper) func() error {
	e := &entry{k: k, index: -1, due: time.Now().Add(k.nextDelay(k.cfg.Interval))}
	s := register(be, e)
	finish := func() {
		s.remove(e)
		e.mu.Lock()
		e.done = true
		e.mu.Unlock()
	}
	// The caller's ctx ending ends the heartbeat (held is already cancelled
	// with ctx's cause, being derived from it). No goroutine waits for it.
	stopAfter := context.AfterFunc(ctx, finish)
	var once sync.Once
	var lost error
	return func() error {
		once.Do(func() {
			stopAfter()
			finish()
			e.mu.Lock()
			lost = k.lost
			e.mu.Unlock()
			k.cancel(nil)
		})
		return lost
	}
}

// register adds e to be's scheduler, starting the scheduler if needed.
func register(be IDBackend, e *entry) *scheduler {
	schedulers.mu.Lock()
	defer schedulers.mu.Unlock()
	s := schedulers.m[be]
	if s == nil {
		if schedulers.m == nil {
			schedulers.m = map[IDBackend]*scheduler{}
		}
		s = &scheduler{be: be, wake: make(chan struct{}, 1)}
		schedulers.m[be] = s
		go s.run()
	}
	s.mu.Lock()
	s.n++
	heap.Push(&s.queue, e)
	s.mu.Unlock()
	s.signal()
	return s
}

// exit unregisters s if it has no lease, under the registry lock so that
// no Keep can add one meanwhile, and reports whether it did.
func (s *scheduler) exit() bool {
	schedulers.mu.Lock()
	defer schedulers.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n > 0 {
		return false
	}
	delete(schedulers.m, s.be)
	return true
}
