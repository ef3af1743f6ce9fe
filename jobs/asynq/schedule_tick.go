package asynqlock

import (
	"errors"
	"log/slog"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// ErrEntriesDiffer is matched by the Err of a Tick of kind
// TickEntriesDiffer.
var ErrEntriesDiffer = errors.New("asynqlock: this replica's entries differ from the leader's")

// TickKind tells what a Tick reports.
type TickKind int

const (
	// TickEnqueue is an attempt to enqueue a tick.
	TickEnqueue TickKind = iota
	// TickEntriesDiffer is an entry that this replica and the last term's
	// leader do not register alike (EntryID; Err tells how).
	TickEntriesDiffer
)

// Tick is what became of one tick of an entry in the leader's hands, or
// a difference between this replica's entries and the leader's, as given
// to the function set with OnTick.
type Tick struct {
	// Kind is TickEnqueue or TickEntriesDiffer.
	Kind TickKind
	// EntryID is the entry's id, as returned by Register.
	EntryID string
	// At is the tick's scheduled time, in UTC.
	At time.Time
	// TaskID is the asynq task id of the tick (TickID).
	TaskID string
	// Fence is the fence of the term that tried to enqueue it (for
	// TickEntriesDiffer, of the term whose entries differ).
	Fence lock.Fence
	// CatchUp is true for a tick the term enqueued (or failed to) on its
	// start because it fell in the gap before it. A new term does not
	// report a tick of that gap that an earlier term enqueued or recorded,
	// nor one from before the entry's first term: nothing happened to it.
	CatchUp bool
	// Delay is how late the enqueue was answered: its time less At.
	Delay time.Duration
	// Missed counts the entry's ticks between the last one enqueued and
	// this one: coalesced into it, never enqueued.
	Missed int
	// Err is nil when this process enqueued the task, matches
	// asynq.ErrTaskIDConflict when a tick due in this term was already
	// enqueued (by another term), and is the enqueue's error otherwise;
	// the tick is then tried again until the entry's next tick is due or
	// the term ends.
	Err error
}

// report passes the outcome of a tick to the OnTick function.
func (t *term) report(sl *slot, at time.Time, missed int, err error) {
	tk := Tick{
		EntryID: sl.e.id, At: at, TaskID: TickID(t.s.key, sl.e.id, at),
		Fence: t.lease.Fence, CatchUp: sl.catchUp, Err: err,
		Delay: t.s.clock.now().Sub(at), Missed: missed,
	}
	t.s.metrics.tick(tk)
	callOnTick(t.onTick, tk)
}

// callOnTick calls f with tk, logging and recovering a panic, so that it
// never ends a term.
func callOnTick(f func(Tick), tk Tick) {
	if f == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			slog.Error("asynqlock: the scheduler's OnTick function panicked; recovered",
				"panic", r, "entry", tk.EntryID)
		}
	}()
	f(tk)
}
