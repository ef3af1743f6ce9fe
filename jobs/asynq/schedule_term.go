package asynqlock

import (
	"context"
	"errors"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
)

// Waits between tries of a tick whose enqueue failed.
const (
	minRetryWait = 100 * time.Millisecond
	maxRetryWait = time.Second
)

// errTermLost ends a term whose lease the backend no longer holds.
var errTermLost = errors.New("asynqlock: the term's lease is gone")

// term is one term of leadership: the entries' next ticks, in this
// leader's hands.
type term struct {
	s      *Scheduler
	held   context.Context
	lease  lock.Lease
	onTick func(Tick)
	slots  map[string]*slot
}

// slot is an entry within a term.
type slot struct {
	e       *entry
	from    time.Time // the earliest tick still to enqueue: the latest tick in [from, now] is due
	catchUp bool      // from is the start of the catch-up window
	retryAt time.Time // after a failed enqueue, when to try again
	wait    time.Duration
}

// lead runs one term (election.Lead's fn): it enqueues the entries' ticks
// until the term ends. It always returns nil, so Lead campaigns again.
func (s *Scheduler) lead(held context.Context, lease lock.Lease) error {
	t := &term{s: s, held: held, lease: lease, slots: map[string]*slot{}}
	t.sync(time.Now(), true)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if when, ok := t.due(); ok {
			timer.Reset(time.Until(when))
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-held.Done():
			return nil
		case <-s.changed:
			t.sync(time.Now(), false)
		case <-timer.C:
		}
		if err := t.fire(time.Now()); err != nil {
			return nil // errTermLost: Lead's release finds the term gone and campaigns again
		}
	}
}

// sync reads the registered entries: an entry new to the term starts at
// the catch-up window on the term's start, else at its next tick.
func (t *term) sync(now time.Time, start bool) {
	entries, onTick := t.s.snapshot()
	t.onTick = onTick
	for id := range t.slots {
		if _, ok := entries[id]; !ok {
			delete(t.slots, id)
		}
	}
	for id, e := range entries {
		if _, ok := t.slots[id]; ok {
			continue
		}
		if start {
			t.slots[id] = &slot{e: e, from: now.Add(-e.window(t.lease.TTL)), catchUp: true}
		} else {
			t.slots[id] = &slot{e: e, from: e.next(now)}
		}
	}
}

// due returns when the next slot is due.
func (t *term) due() (time.Time, bool) {
	var first time.Time
	for _, sl := range t.slots {
		when := sl.from
		if !sl.retryAt.IsZero() {
			when = sl.retryAt
		}
		if first.IsZero() || when.Before(first) {
			first = when
		}
	}
	return first, !first.IsZero()
}

// fire enqueues the latest due tick of every due slot (earlier ones
// coalesce into it). It returns errTermLost when the term is gone.
func (t *term) fire(now time.Time) error {
	for _, sl := range t.slots {
		if sl.from.After(now) || sl.retryAt.After(now) {
			continue
		}
		at, ok := sl.e.latest(sl.from, now)
		if !ok { // nothing in the catch-up window
			sl.from, sl.catchUp = sl.e.next(now), false
			continue
		}
		err := t.enqueue(sl, at)
		if errors.Is(err, errTermLost) {
			return err
		}
		if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
			sl.wait = min(max(2*sl.wait, minRetryWait), maxRetryWait)
			sl.retryAt = now.Add(sl.wait)
			continue
		}
		sl.from, sl.catchUp, sl.retryAt, sl.wait = sl.e.next(at), false, time.Time{}, 0
	}
	return nil
}

// enqueue checks the term, then enqueues the tick at under its task id;
// a task id asynq already holds means an earlier term enqueued it.
func (t *term) enqueue(sl *slot, at time.Time) error {
	if err := t.check(); err != nil {
		if !errors.Is(err, errTermLost) {
			t.report(sl, at, err)
		}
		return err
	}
	id := TickID(t.s.key, sl.e.id, at)
	opts := append(sl.e.opts[:len(sl.e.opts):len(sl.e.opts)],
		asynq.TaskID(id), asynq.Retention(sl.e.retention(t.lease.TTL)))
	_, err := t.s.client.EnqueueContext(t.held, sl.e.task, opts...)
	t.report(sl, at, err)
	return err
}

// check returns errTermLost unless the term's context is live and the
// backend still holds its lease (an old leader waking from a stall sees
// the lease gone before its heartbeat does).
func (t *term) check() error {
	if t.held.Err() != nil {
		return errTermLost
	}
	info, err := t.s.b.LookupID(t.held, t.lease.ID)
	switch {
	case err != nil && t.held.Err() != nil:
		return errTermLost
	case err != nil:
		return err
	case info == nil || info.Fence != t.lease.Fence:
		return errTermLost
	}
	return nil
}

// report passes the outcome of a tick to the OnTick function.
func (t *term) report(sl *slot, at time.Time, err error) {
	if t.onTick == nil {
		return
	}
	t.onTick(Tick{
		EntryID: sl.e.id, At: at, TaskID: TickID(t.s.key, sl.e.id, at),
		Fence: t.lease.Fence, CatchUp: sl.catchUp, Err: err,
	})
}
