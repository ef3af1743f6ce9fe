package lock

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// schedulerKey names, in a backend's Locals, the slot of the scheduler
// that extends the leases kept through one chain of hooks around it (nil:
// the backend itself), so that each chain's hooks see its batches.
type schedulerKey struct{ chain *hooked }

// schedulerSlot holds the running scheduler of a key. A scheduler removes
// itself (under mu) when it has no lease left; the next Keep starts one.
type schedulerSlot struct {
	mu sync.Mutex
	s  *scheduler
}

// slotOf returns the scheduler slot of be, or nil when be offers no
// Locals (its leases are then kept one goroutine each).
func slotOf(be IDBackend) *schedulerSlot {
	loc := localsOf(be)
	if loc == nil {
		return nil
	}
	var key schedulerKey
	if hc, ok := be.(hookChain); ok {
		key.chain = hc.chain()
	}
	return loc.Load(key, func() any { return new(schedulerSlot) }).(*schedulerSlot)
}

// keepBatched registers k with the scheduler of be in slot and returns
// Keep's stop function.
func keepBatched(ctx context.Context, be IDBackend, slot *schedulerSlot, k *keeper) func() error {
	e := &entry{k: k, index: -1, due: time.Now().Add(k.nextDelay(k.cfg.Interval))}
	s := slot.register(be, e)
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

// register adds e to the slot's scheduler, starting one for be if needed.
func (slot *schedulerSlot) register(be IDBackend, e *entry) *scheduler {
	slot.mu.Lock()
	defer slot.mu.Unlock()
	s := slot.s
	if s == nil {
		s = &scheduler{be: be, slot: slot, wake: make(chan struct{}, 1)}
		slot.s = s
		go s.run()
	}
	s.mu.Lock()
	s.n++
	heap.Push(&s.queue, e)
	s.mu.Unlock()
	s.signal()
	return s
}

// exit empties s's slot if s has no lease, under the slot's lock so that
// no Keep can add one meanwhile, and reports whether it did.
func (s *scheduler) exit() bool {
	s.slot.mu.Lock()
	defer s.slot.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n > 0 {
		return false
	}
	s.slot.s = nil
	return true
}
