package lock

import (
	"container/heap"
	"context"
	"slices"
	"sync"
	"time"
)

// Scheduler tuning.
const (
	// maxBatch is the most leases sent in one ExtendBatch call.
	maxBatch = 1000
	// maxCoalesce caps how early a lease may be extended to join a batch
	// (otherwise a tenth of its interval).
	maxCoalesce = time.Second
	// maxBatchWait bounds one ExtendBatch call; it is also bounded by the
	// latest local deadline among its leases.
	maxBatchWait = 10 * time.Second
)

// errNoResult stands for a result an IDBackend failed to return.
var errNoResult = &Error{Code: CodeInternal, Op: "extend", Msg: "the backend returned no result for this lease"}

// scheduler extends the leases kept alive on one IDBackend.
type scheduler struct {
	be   IDBackend
	slot *schedulerSlot // where it is registered
	wake chan struct{}  // buffered(1): the heap or the lease count changed

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

// run is the scheduler goroutine: sleep until the earliest due lease,
// extend every lease due within its coalescing window in one batch, apply
// the results, repeat; return when no lease is left.
func (s *scheduler) run() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var r round
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
		ctx, cancel := r.take(s, now)
		s.mu.Unlock()
		for _, e := range r.expired {
			s.settle(e, now, func() (time.Duration, bool) { return 0, e.k.expired(now) })
		}
		clear(r.expired)
		if len(r.batch) > 0 {
			s.extend(ctx, cancel, &r, now)
		}
	}
}

// round is the leases of one pass of run, its buffers kept across passes.
type round struct {
	batch, expired []*entry
	reqs           []Lease
}

// take collects the leases due by now into r: those whose local deadline
// has passed into r.expired, the others into r.batch, with their requests
// and the batch's context. The caller holds s.mu. The batch's deadline is
// the latest of its leases' (at most maxBatchWait away): a backend returns
// by its context's deadline, so the earliest would abandon the whole batch
// when one lease in it runs out of time. An extension that lands after a
// lease's own local deadline is still valid: the script extends only a
// lease that is live by the server's clock.
func (r *round) take(s *scheduler, now time.Time) (context.Context, context.CancelFunc) {
	r.batch = s.collect(now, r.batch[:0])
	r.expired = r.expired[:0]
	var latest time.Time
	kept := r.batch[:0]
	for _, e := range r.batch {
		// Only the scheduler goroutine writes k.deadline once registered.
		if !now.Before(e.k.deadline) {
			r.expired = append(r.expired, e)
			continue
		}
		if e.k.deadline.After(latest) {
			latest = e.k.deadline
		}
		kept = append(kept, e)
	}
	r.batch = kept
	if len(r.batch) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithDeadline(context.Background(), minTime(latest, now.Add(maxBatchWait)))
	f := &flight{live: len(r.batch), cancel: cancel}
	r.reqs = r.reqs[:0]
	for _, e := range r.batch {
		e.flight = f
		r.reqs = append(r.reqs, Lease{ID: e.k.lease.ID, TTL: e.k.ttl})
	}
	return ctx, cancel
}

// extend sends r's batch, taken at now, and applies the results.
func (s *scheduler) extend(ctx context.Context, cancel context.CancelFunc, r *round, now time.Time) {
	stopWatch := s.watch(r.batch)
	results := s.be.ExtendBatch(ctx, r.reqs)
	stopWatch()
	cancel()
	s.mu.Lock()
	for _, e := range r.batch {
		e.flight = nil
	}
	s.mu.Unlock()
	// One base time for the whole batch keeps its leases due together.
	after := time.Now()
	for i, e := range r.batch {
		res := ExtendResult{Err: errNoResult}
		if i < len(results) {
			res = results[i]
		}
		s.settle(e, after, func() (time.Duration, bool) { return e.k.apply(now, res.ExpiresAt, res.Err) })
	}
	clear(r.batch)
	clear(r.reqs)
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
		if e.due.After(now.Add(min(e.k.cfg.Interval/10, maxCoalesce))) {
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

// watch declares lost, at its own local deadline, each lease of batch whose
// deadline passes while the batch is in flight (the call may run until the
// latest deadline of the batch): held is cancelled on time, as on the
// per-lease path, and the late reply is ignored for it (settle skips a
// done entry). It returns the function that stops the watch; one timer per
// batch, re-armed for the next deadline.
func (s *scheduler) watch(batch []*entry) (stop func()) {
	byDeadline := slices.Clone(batch)
	slices.SortFunc(byDeadline, func(a, b *entry) int { return a.k.deadline.Compare(b.k.deadline) })
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	var fire func()
	fire = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		now := time.Now()
		for len(byDeadline) > 0 && !now.Before(byDeadline[0].k.deadline) {
			e := byDeadline[0]
			byDeadline = byDeadline[1:]
			s.settle(e, now, func() (time.Duration, bool) { return 0, e.k.expired(now) })
		}
		if len(byDeadline) > 0 {
			t.Reset(byDeadline[0].k.deadline.Sub(now))
		}
	}
	mu.Lock()
	t = time.AfterFunc(byDeadline[0].k.deadline.Sub(time.Now()), fire)
	mu.Unlock()
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	}
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
