package asynqlock

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/internal/wire"
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

// Outcomes of a claim that enqueue nothing and are not failures.
var (
	// errRecorded: the entry's record holds this tick or a later one.
	errRecorded = fmt.Errorf("%w: the entry's record holds this tick or a later one", asynq.ErrTaskIDConflict)
	// errFirstRun: a catch-up for an entry that has no record; the
	// record then starts at the tick.
	errFirstRun = errors.New("asynqlock: no record of the entry: no catch-up")
	// errUnregistered: the entry was unregistered.
	errUnregistered = errors.New("asynqlock: the entry was unregistered")
)

// enqueued reports whether err leaves the tick done: enqueued now or
// before, or not to be enqueued.
func enqueued(err error) bool {
	return err == nil || errors.Is(err, asynq.ErrTaskIDConflict) || errors.Is(err, errFirstRun) || errors.Is(err, errUnregistered)
}

// claim enqueues the tick at of sl's entry unless its record, read and
// written under a lease of the entry's key, holds it or a later tick. A
// record written by a newer term ends this one (errTermLost). It reports
// what this term did: a catch-up that finds its tick recorded or
// enqueued by an earlier term, or from before the entry's first term,
// did nothing and is not reported.
func (t *term) claim(sl *slot, at, now time.Time) error {
	if err := t.check(); err != nil {
		if !errors.Is(err, errTermLost) {
			t.report(sl, at, 0, err)
		}
		return err
	}
	ctx, cancel := context.WithTimeout(t.held, t.s.ttl)
	defer cancel()
	key := wire.ScheduleEntryKey(t.s.key, sl.e.id)
	l, err := t.s.b.Acquire(ctx, key, t.s.ttl)
	if err != nil {
		t.report(sl, at, 0, err)
		return err
	}
	last, found, err := t.record(ctx, key)
	missed := 0
	if found {
		missed = sl.e.missed(last.Last, at)
	}
	switch {
	case err != nil:
	case found && last.Fence.Compare(t.lease.Fence) > 0 && t.check() != nil:
		err = errTermLost // a newer term wrote it (still ours: fences went back, and we go on)
	case found && !at.After(last.Last):
		err = errRecorded
	case !found && sl.catchUp:
		err = errFirstRun
	case !t.s.registered(sl.e):
		err = errUnregistered
	}
	if errors.Is(err, errFirstRun) { // the entry's first term: ticks up to at are the past
		_ = t.s.b.ReleaseRecord(ctx, l, wire.ScheduleTick{Fence: t.lease.Fence, Last: at}.Encode(), t.s.clock.wall(sl.e.recordTTL(at, now, t.s.ttl)))
		return err
	}
	if err != nil {
		_ = t.s.b.Release(context.WithoutCancel(ctx), l.ID) // else it ends with its TTL
		if errors.Is(err, errRecorded) && !sl.catchUp || !enqueued(err) && !errors.Is(err, errTermLost) {
			t.report(sl, at, missed, err)
		}
		return err
	}
	// Through Enqueue: a tick's task carries the term's trace context.
	_, err = Enqueue(ctx, t.s.client, sl.e.task, sl.e.enqueueOptions(TickID(t.s.key, sl.e.id, at), t.s.clock.wall(sl.e.retention(at)))...)
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) && !errors.Is(err, ErrDuplicateTask) {
		_ = t.s.b.Release(context.WithoutCancel(ctx), l.ID)
		t.report(sl, at, missed, err)
		return err
	}
	rec := wire.ScheduleTick{Fence: t.lease.Fence, Last: at}.Encode()
	// Not recorded (the lease ran out): the task id still guards the tick.
	_ = t.s.b.ReleaseRecord(ctx, l, rec, t.s.clock.wall(sl.e.recordTTL(at, now, t.s.ttl)))
	if err == nil || !sl.catchUp {
		t.report(sl, at, missed, err)
	}
	return err
}

// record reads the entry's record; one this version cannot read counts
// as none.
func (t *term) record(ctx context.Context, key string) (wire.ScheduleTick, bool, error) {
	b, found, err := t.s.b.Record(ctx, key)
	if err != nil || !found {
		return wire.ScheduleTick{}, false, err
	}
	r, err := wire.DecodeScheduleTick(b)
	return r, err == nil, nil
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

// markStart gives an entry that has no record one that starts at now, so
// that a later term catches up its ticks: on a first deploy, the past is
// not caught up, and the ticks from now on are.
func (t *term) markStart(sl *slot, now time.Time) {
	ctx, cancel := context.WithTimeout(t.held, t.s.ttl)
	defer cancel()
	key := wire.ScheduleEntryKey(t.s.key, sl.e.id)
	l, err := t.s.b.Acquire(ctx, key, t.s.ttl)
	if err != nil {
		return // the next term's catch-up then skips, as on a first deploy
	}
	if _, found, err := t.record(ctx, key); err != nil || found {
		_ = t.s.b.Release(context.WithoutCancel(ctx), l.ID)
		return
	}
	_ = t.s.b.ReleaseRecord(ctx, l, wire.ScheduleTick{Fence: t.lease.Fence, Last: now}.Encode(), t.s.clock.wall(sl.e.recordTTL(now, now, t.s.ttl)))
}

// manifestTTL is how long a term's manifest of its entries is kept after
// its last change.
const manifestTTL = 30 * 24 * time.Hour

// syncManifest compares entries with the manifest the last term stored
// and reports each difference; a term stores its own when it starts and
// when its entries change. Failures are not the term's: they are left.
func (s *Scheduler) syncManifest(ctx context.Context, fence lock.Fence, entries map[string]*entry, start bool, onTick func(Tick)) {
	ctx, cancel := context.WithTimeout(ctx, s.ttl)
	defer cancel()
	key := wire.ScheduleManifestKey(s.key)
	l, err := s.b.Acquire(ctx, key, s.ttl)
	if err != nil {
		return
	}
	if start {
		if b, found, err := s.b.Record(ctx, key); err == nil && found {
			if theirs, err := wire.DecodeScheduleManifest(b); err == nil {
				s.reportDiffs(theirs, entries, onTick)
			}
		}
	}
	mine := &wire.ScheduleManifest{Fence: fence, Identity: s.identity}
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		mine.Entries = append(mine.Entries, wire.ScheduleEntry{ID: id, Content: entries[id].content})
	}
	_ = s.b.ReleaseRecord(ctx, l, mine.Encode(), manifestTTL)
}

// compareManifest reports how this replica's entries differ from those
// of the manifest stored by the last term, if any (a starting Run).
func (s *Scheduler) compareManifest(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, s.ttl)
	defer cancel()
	b, found, err := s.b.Record(ctx, wire.ScheduleManifestKey(s.key))
	if err != nil || !found {
		return
	}
	theirs, err := wire.DecodeScheduleManifest(b)
	if err != nil {
		return
	}
	entries, onTick := s.snapshot()
	s.reportDiffs(theirs, entries, onTick)
}

// reportDiffs reports each entry that entries and the manifest theirs do
// not have alike, as a Tick of kind TickEntriesDiffer.
func (s *Scheduler) reportDiffs(theirs *wire.ScheduleManifest, entries map[string]*entry, onTick func(Tick)) {
	seen := map[string]bool{}
	diff := func(id, how string) {
		tk := Tick{Kind: TickEntriesDiffer, EntryID: id, Fence: theirs.Fence,
			Err: fmt.Errorf("%w: entry %q %s (leader %q, term %s)", ErrEntriesDiffer, id, how, theirs.Identity, theirs.Fence)}
		s.metrics.tick(tk)
		callOnTick(onTick, tk)
	}
	for _, te := range theirs.Entries {
		seen[te.ID] = true
		switch e, ok := entries[te.ID]; {
		case !ok:
			diff(te.ID, "is registered by the leader, not here")
		case e.content != te.Content:
			diff(te.ID, "is registered otherwise by the leader (spec, task, options or catch-up)")
		}
	}
	for _, id := range slices.Sorted(maps.Keys(entries)) {
		if !seen[id] {
			diff(id, "is registered here, not by the leader")
		}
	}
}

// clock is a Scheduler's time: the wall clock, or, for tests, a clock
// that reads origin at the wall clock's start and runs speed times
// faster.
type clock struct {
	origin, start time.Time
	speed         float64 // 0: the wall clock
}

func (c *clock) now() time.Time {
	if c.speed == 0 {
		return time.Now()
	}
	return c.origin.Add(time.Duration(float64(time.Since(c.start)) * c.speed))
}

// wall converts a duration of the clock into one of the wall clock.
func (c *clock) wall(d time.Duration) time.Duration {
	if c.speed == 0 {
		return d
	}
	return time.Duration(float64(d) / c.speed)
}
