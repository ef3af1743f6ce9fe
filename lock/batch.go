package lock

import (
	"container/heap"
	"context"
	"reflect"
	"sync"
	"time"
)

// BatchExtender is an optional Backend interface: extend many leases in
// one round trip. [Keep] detects it with a type assertion and then keeps
// all the leases of that backend alive from one scheduler goroutine.
type BatchExtender interface {
	// ExtendBatch extends every lease in reqs; results[i] is for reqs[i],
	// with the same meaning as Extend's results (the new expiry, or an
	// error matching ErrNotHeld, or a system error). A system error for the
	// whole batch may be returned in every result. It must return exactly
	// len(reqs) results; a missing result counts as a transient error.
	ExtendBatch(ctx context.Context, reqs []ExtendRequest) []ExtendResult
}

// ExtendRequest is one lease to extend in a [BatchExtender.ExtendBatch]
// call: its lock id and the TTL to extend it by, as for Backend.Extend.
type ExtendRequest struct {
	ID  string
	TTL time.Duration
}

// ExtendResult is the outcome of one [ExtendRequest]: the new expiry by
// the backend's clock, or the error Backend.Extend would have returned.
type ExtendResult struct {
	ExpiresAt time.Time
	Err       error
}

// Scheduler tuning.
const (
	// maxBatch is the most leases sent in one ExtendBatch call.
	maxBatch = 1000
	// maxCoalesce caps how early a lease may be extended to join a batch
	// (otherwise a tenth of its interval).
	maxCoalesce = time.Second
	// maxBatchWait bounds one ExtendBatch call; it is also bounded by the
	// earliest local deadline among its leases.
	maxBatchWait = 10 * time.Second
)

// errNoResult stands for a result a BatchExtender failed to return.
var errNoResult = &Error{Code: CodeInternal, Op: "extend", Msg: "the backend returned no result for this lease"}

// schedulers holds the running scheduler of each BatchExtender. A
// scheduler removes itself (under mu) when it has no lease left, and is
// started again by the next Keep.
var schedulers struct {
	mu sync.Mutex
	m  map[BatchExtender]*scheduler
}

// batchable reports whether be can key the scheduler registry (a
// non-comparable dynamic type would panic as a map key; such a backend
// keeps the per-lease heartbeat).
func batchable(be BatchExtender) bool {
	return reflect.ValueOf(be).Comparable()
}

// scheduler extends the leases kept alive on one BatchExtender.
type scheduler struct {
	be   BatchExtender
	wake chan struct{} // buffered(1): the heap or the lease count changed

	mu    sync.Mutex
	queue entryHeap // leases waiting for their next extension
	n     int       // leases registered: queued or in the in-flight batch
}

// flight is one in-flight ExtendBatch call.
type flight struct {
	live   int                // its leases not yet removed; guarded by scheduler.mu
	cancel context.CancelFunc // cancels the call once live drops to 0
}

// entry is one lease in a scheduler.
type entry struct {
	k *keeper

	// Guarded by scheduler.mu.
	due     time.Time // next extension attempt
	index   int       // position in the queue, -1 when not queued
	flight  *flight   // the in-flight batch holding it, or nil
	removed bool      // stopped, caller's ctx done, or lost

	// mu serialises applying results (and so the callbacks) with stop.
	mu   sync.Mutex
	done bool // no more results are applied; guarded by mu
}

// keepBatched registers k with the scheduler of be and returns Keep's
// stop function.
func keepBatched(ctx context.Context, be BatchExtender, k *keeper) func() error {
	e := &entry{k: k, index: -1, due: time.Now().Add(k.nextDelay(k.cfg.interval))}
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
func register(be BatchExtender, e *entry) *scheduler {
	schedulers.mu.Lock()
	defer schedulers.mu.Unlock()
	s := schedulers.m[be]
	if s == nil {
		if schedulers.m == nil {
			schedulers.m = map[BatchExtender]*scheduler{}
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

func (s *scheduler) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// remove takes e out of the scheduler; it is idempotent and never waits
// for an in-flight batch (that batch is cancelled when none of its leases
// remains).
func (s *scheduler) remove(e *entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.removed {
		return
	}
	e.removed = true
	s.n--
	if e.index >= 0 {
		heap.Remove(&s.queue, e.index)
	}
	if f := e.flight; f != nil {
		e.flight = nil
		if f.live--; f.live == 0 {
			f.cancel()
		}
	}
	if s.n == 0 {
		s.signal()
	}
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

// run is the scheduler goroutine: sleep until the earliest due lease,
// extend every lease due within its coalescing window in one batch, apply
// the results, repeat; return when no lease is left.
func (s *scheduler) run() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var batch, expired []*entry
	var reqs []ExtendRequest
	for {
		s.mu.Lock()
		if s.n == 0 {
			s.mu.Unlock()
			if s.exit() {
				return
			}
			continue
		}
		now := time.Now()
		wait := time.Hour
		if len(s.queue) > 0 {
			wait = s.queue[0].due.Sub(now)
		}
		if wait > 0 {
			s.mu.Unlock()
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-s.wake:
			}
			continue
		}
		batch = s.collect(now, batch[:0])
		expired = expired[:0]
		var earliest time.Time
		kept := batch[:0]
		for _, e := range batch {
			// Only this goroutine writes k.deadline once registered.
			if !now.Before(e.k.deadline) {
				expired = append(expired, e)
				continue
			}
			if earliest.IsZero() || e.k.deadline.Before(earliest) {
				earliest = e.k.deadline
			}
			kept = append(kept, e)
		}
		batch = kept
		var ctx context.Context
		var cancel context.CancelFunc
		if len(batch) > 0 {
			ctx, cancel = context.WithDeadline(context.Background(), minTime(earliest, now.Add(maxBatchWait)))
			f := &flight{live: len(batch), cancel: cancel}
			reqs = reqs[:0]
			for _, e := range batch {
				e.flight = f
				reqs = append(reqs, ExtendRequest{ID: e.k.lease.ID, TTL: e.k.ttl})
			}
		}
		s.mu.Unlock()

		for _, e := range expired {
			s.settle(e, now, func() (time.Duration, bool) { return 0, e.k.expired(now) })
		}
		clear(expired)
		if len(batch) == 0 {
			continue
		}
		results := s.be.ExtendBatch(ctx, reqs)
		cancel()
		s.mu.Lock()
		for _, e := range batch {
			e.flight = nil
		}
		s.mu.Unlock()
		// One base time for the whole batch keeps its leases due together.
		after := time.Now()
		for i, e := range batch {
			r := ExtendResult{Err: errNoResult}
			if i < len(results) {
				r = results[i]
			}
			s.settle(e, after, func() (time.Duration, bool) { return e.k.apply(now, r.ExpiresAt, r.Err) })
		}
		clear(batch)
		clear(reqs)
	}
}

// collect pops the leases due by now plus their coalescing window, at most
// maxBatch of them; the caller holds s.mu.
func (s *scheduler) collect(now time.Time, batch []*entry) []*entry {
	var early []*entry
	for len(s.queue) > 0 && len(batch) < maxBatch {
		e := s.queue[0]
		if e.due.After(now.Add(maxCoalesce)) {
			break
		}
		heap.Pop(&s.queue)
		if e.due.After(now.Add(min(e.k.cfg.interval/10, maxCoalesce))) {
			early = append(early, e) // within the largest window, not its own
			continue
		}
		batch = append(batch, e)
	}
	for _, e := range early {
		heap.Push(&s.queue, e)
	}
	return batch
}

// settle applies one outcome to e unless it was stopped meanwhile, then
// queues e for its next attempt (the returned delay after base) or
// removes it when lost.
func (s *scheduler) settle(e *entry, base time.Time, apply func() (time.Duration, bool)) {
	e.mu.Lock()
	if e.done {
		e.mu.Unlock()
		return
	}
	next, lost := apply()
	if lost {
		e.done = true
	}
	e.mu.Unlock()
	if lost {
		s.remove(e)
		return
	}
	s.mu.Lock()
	if !e.removed {
		e.due = base.Add(next)
		heap.Push(&s.queue, e)
	}
	s.mu.Unlock()
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// entryHeap orders entries by due time (container/heap).
type entryHeap []*entry

// Len, Less, Swap, Push and Pop implement heap.Interface.
func (h entryHeap) Len() int { return len(h) }

// Less orders by due time.
func (h entryHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }

// Swap swaps two entries and keeps their indexes.
func (h entryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

// Push appends an entry.
func (h *entryHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}

// Pop removes the last entry.
func (h *entryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}
