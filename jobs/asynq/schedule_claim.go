package asynqlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/internal/wire"
)

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
	opts := append(sl.e.opts[:len(sl.e.opts):len(sl.e.opts)],
		asynq.TaskID(TickID(t.s.key, sl.e.id, at)), asynq.Retention(t.s.clock.wall(sl.e.retention(at))))
	_, err = t.s.client.EnqueueContext(ctx, sl.e.task, opts...)
	if err != nil && !errors.Is(err, asynq.ErrTaskIDConflict) {
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
