package asynqlock

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// Waits between tries of a tick whose enqueue failed.
const (
	minRetryWait = 100 * time.Millisecond
	maxRetryWait = time.Second
)

// maxMissedCount bounds the ticks counted as missed in one gap.
const maxMissedCount = 10000

// errTermLost ends a term whose lease the backend no longer holds, or
// whose entry a newer term has written.
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
	from    time.Time // the ticks after from are still to enqueue
	catchUp bool      // from is the start of the catch-up window
	retryAt time.Time // after a failed enqueue, when to try again
	wait    time.Duration
}

// lead runs one term (election.Lead's fn): it enqueues the entries' ticks
// until the term ends. It always returns nil, so Lead campaigns again.
func (s *Scheduler) lead(held context.Context, lease lock.Lease) error {
	t := &term{s: s, held: held, lease: lease, slots: map[string]*slot{}}
	t.sync(s.clock.now(), true)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := time.Hour
		if when, ok := t.due(); ok {
			wait = s.clock.wall(when.Sub(s.clock.now()))
		}
		timer.Reset(wait)
		select {
		case <-held.Done():
			return nil
		case <-s.changed:
			t.sync(s.clock.now(), false)
		case <-timer.C:
		}
		if err := t.fire(s.clock.now()); err != nil {
			return nil // errTermLost: Lead's release finds the term gone and campaigns again
		}
	}
}

// sync reads the registered entries: an entry new to the term starts at
// its catch-up window on the term's start, else after now. It compares
// and stores the entries' manifest.
func (t *term) sync(now time.Time, start bool) {
	entries, onTick := t.s.snapshot()
	t.onTick = onTick
	for id, sl := range t.slots {
		if entries[id] != sl.e {
			delete(t.slots, id)
		}
	}
	for id, e := range entries {
		if _, ok := t.slots[id]; ok {
			continue
		}
		if start {
			t.slots[id] = &slot{e: e, from: now.Add(-e.window), catchUp: true}
		} else {
			t.slots[id] = &slot{e: e, from: now}
		}
	}
	t.s.syncManifest(t.held, t.lease.Fence, entries, start, onTick)
}

// due returns when the next slot is due.
func (t *term) due() (time.Time, bool) {
	var first time.Time
	for _, sl := range t.slots {
		when := sl.retryAt
		if when.IsZero() {
			when = sl.e.next(sl.from)
		}
		if when.IsZero() {
			continue
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
		if sl.retryAt.After(now) {
			continue
		}
		at, ok := sl.e.latest(sl.from, now)
		if !ok {
			if sl.catchUp { // nothing in the catch-up window
				t.markStart(sl, now)
				sl.from, sl.catchUp = now, false
			}
			continue
		}
		err := t.claim(sl, at, now)
		switch {
		case errors.Is(err, errTermLost):
			return err
		case err != nil && !enqueued(err):
			sl.wait = min(max(2*sl.wait, minRetryWait), maxRetryWait)
			sl.retryAt = now.Add(sl.wait)
			continue
		}
		sl.from, sl.catchUp, sl.retryAt, sl.wait = at, false, time.Time{}, 0
	}
	return nil
}

// missed counts the entry's ticks in (after, at).
func (e *entry) missed(after, at time.Time) int {
	if after.IsZero() || !after.Before(at) {
		return 0
	}
	if e.spec.every > 0 {
		d := int64(e.spec.every)
		return int(max(0, (at.UnixNano()-1)/d-after.UnixNano()/d))
	}
	n := 0
	for tk := e.next(after); n < maxMissedCount && !tk.IsZero() && tk.Before(at); tk = e.next(tk) {
		n++
	}
	return n
}
