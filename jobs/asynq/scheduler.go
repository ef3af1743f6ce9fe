package asynqlock

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Scheduler enqueues periodic asynq tasks. Every replica of a service runs
// it, and only the leader elected on its key enqueues. Its methods are
// shaped like asynq.Scheduler's.
//
// Each scheduled time of an entry is enqueued at most once. After a
// failover the new leader enqueues the latest tick missed within the
// entry's catch-up window. docs/asynq.md has the guarantees and limits.
//
// A Scheduler is safe for concurrent use.
type Scheduler struct {
	client   *asynq.Client
	b        lock.Recorder
	key      string
	identity string
	opts     []election.Option
	ttl      time.Duration
	clock    clock
	metrics  *schedMetrics

	mu      sync.Mutex
	entries map[string]*entry
	onTick  func(Tick)
	running bool
	changed chan struct{} // a registration changed: the term re-reads entries
}

// NewScheduler returns a Scheduler that campaigns on key as identity, with
// client enqueueing the tasks. b must be a lock.Recorder, as redisbackend's
// Backend is. opts are those of election.Lead; election.WithTTL bounds the
// failover time. It returns lock.CodeInvalidArgument, without I/O, for what
// election.Lead would refuse, a nil client, or a b that is no Recorder.
func NewScheduler(client *asynq.Client, b lock.Backend, key, identity string, opts ...election.Option) (*Scheduler, error) {
	const op = "new_scheduler"
	switch {
	case client == nil:
		return nil, lockdriver.InvalidArgument(op, "asynq client is nil")
	case b == nil:
		return nil, lockdriver.InvalidArgument(op, "lock backend is nil")
	case key == "":
		return nil, lockdriver.InvalidArgument(op, "key is empty")
	}
	rec, ok := b.(lock.Recorder)
	if !ok {
		return nil, lockdriver.InvalidArgument(op, "lock backend is not a lock.Recorder: the scheduler records each entry's last tick")
	}
	nkey, err := lockdriver.NormalizeKey(key)
	if err != nil {
		return nil, err
	}
	if _, err := lockdriver.NormalizeKey(wire.ScheduleEntryKey(nkey, strings.Repeat("x", MaxEntryName))); err != nil {
		return nil, lockdriver.InvalidArgument(op, "key is too long for the keys of its entries")
	}
	if err := election.Validate(b, key, identity, opts...); err != nil {
		return nil, err
	}
	return &Scheduler{
		client: client, b: rec, key: nkey, identity: identity, opts: opts, ttl: election.TermTTL(opts...),
		metrics: newSchedMetrics(nkey),
		entries: map[string]*entry{},
		changed: make(chan struct{}, 1),
	}, nil
}

// Register adds an entry that enqueues task with opts at every tick of
// cronspec, and returns its id. cronspec is parsed as asynq.Scheduler
// parses it, in UTC unless it starts with CRON_TZ=. "@every d" ticks at
// the exact multiples of d since the Unix epoch (not rounded to seconds);
// d must be at least 1s.
//
// The id is the EntryName given in opts, else a hash of cronspec, type and
// payload, the same on every replica. Registering the same entry again
// returns its id; another entry with the same id is an error. Bad input,
// asynq.TaskID and asynq.Unique among it, is lock.CodeInvalidArgument.
// UniqueEntry makes each tick's task unique until done.
func (s *Scheduler) Register(cronspec string, task *asynq.Task, opts ...asynq.Option) (entryID string, err error) {
	e, err := newEntry(cronspec, task, opts)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if had, ok := s.entries[e.id]; ok {
		s.mu.Unlock()
		if had.content == e.content {
			return e.id, nil
		}
		return "", lockdriver.InvalidArgument("register", "another entry of this scheduler has the id "+strconv.Quote(e.id)+": give them different names with asynqlock.EntryName (or Unregister it first)")
	}
	s.entries[e.id] = e
	s.mu.Unlock()
	s.signal()
	return e.id, nil
}

// Unregister removes the entry with the given id: once it returns, this
// replica enqueues none of the entry's ticks (an enqueue already sent
// may still complete). It returns an error when there is no such entry.
func (s *Scheduler) Unregister(entryID string) error {
	s.mu.Lock()
	_, ok := s.entries[entryID]
	delete(s.entries, entryID)
	s.mu.Unlock()
	if !ok {
		return lockdriver.InvalidArgument("unregister", "no scheduler entry with this id")
	}
	s.signal()
	return nil
}

// OnTick sets a function called with every tick this replica tries to
// enqueue while it leads, and with every difference between its entries
// and the leader's. It runs on the goroutine that enqueues: keep it short.
// A panic in it is logged and recovered. nil removes it.
func (s *Scheduler) OnTick(f func(Tick)) {
	s.mu.Lock()
	s.onTick = f
	s.mu.Unlock()
}

// Run campaigns for the key and, while this replica leads, enqueues the
// entries' ticks. When a term is lost it campaigns again. It returns nil
// when ctx ends, releasing a term it holds so the next candidate leads at
// once. It returns an error when already running, or when the campaign
// cannot go on.
func (s *Scheduler) Run(ctx context.Context) error {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return lockdriver.InvalidArgument("run", "the scheduler is already running")
	}
	s.running = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running = false
		s.mu.Unlock()
	}()
	s.compareManifest(ctx)
	err := election.Lead(ctx, s.b, s.key, s.identity, s.lead, s.opts...)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// signal wakes a running term to re-read the entries.
func (s *Scheduler) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// snapshot returns the registered entries and the OnTick function.
func (s *Scheduler) snapshot() (map[string]*entry, func(Tick)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]*entry, len(s.entries))
	for id, e := range s.entries {
		out[id] = e
	}
	return out, s.onTick
}

// registered reports whether e is still the registered entry of its id.
func (s *Scheduler) registered(e *entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.entries[e.id] == e
}

// DefaultCatchUp is an entry's catch-up window unless CatchUp says
// otherwise: a new term enqueues the latest tick missed within the last
// hour.
const DefaultCatchUp = time.Hour

// MaxEntryName is the longest name EntryName accepts, in bytes.
const MaxEntryName = 64

// The option types of EntryName and CatchUp, apart from asynq's: the
// Scheduler takes them out before asynq sees the options.
const (
	entryNameOpt asynq.OptionType = -1 - iota
	catchUpOpt
	uniqueEntryOpt
)

// schedOption is an option of Register that asynq does not know.
type schedOption struct {
	typ asynq.OptionType
	val any
}

func (o schedOption) Type() asynq.OptionType { return o.typ }
func (o schedOption) Value() any             { return o.val }

func (o schedOption) String() string {
	switch o.typ {
	case entryNameOpt:
		return fmt.Sprintf("asynqlock.EntryName(%q)", o.val)
	case uniqueEntryOpt:
		if u, ok := o.val.(uniqueOption); ok {
			if c, err := u.config(); err == nil {
				return fmt.Sprintf("asynqlock.UniqueEntry(key=%q, backstop=%v, lease=%v)", c.key, c.backstop, c.lease)
			}
		}
		return "asynqlock.UniqueEntry(invalid)"
	}
	return fmt.Sprintf("asynqlock.CatchUp(%v)", o.val)
}

// UniqueEntry is an option of Scheduler.Register making each tick's task
// unique until done, as UniqueUntilDone does for Enqueue: a tick whose
// previous task is still alive is not enqueued, and OnTick sees it with
// an Err matching ErrDuplicateTask. The key is the entry's queue, type
// and payload unless UniqueKey names one.
func UniqueEntry(b lock.Backend, insp *asynq.Inspector, opts ...UniqueOption) asynq.Option {
	return schedOption{uniqueEntryOpt, uniqueOption{b: b, insp: insp, opts: opts}}
}

// EntryName is an option of Scheduler.Register naming the entry: the
// name is its id, the same whatever its spec, task and options, so a
// deploy that edits the entry keeps its record and never enqueues a tick
// that already ran. A name is 1 to MaxEntryName bytes of ASCII letters,
// digits, '.', '_' and '-'.
func EntryName(name string) asynq.Option { return schedOption{entryNameOpt, name} }

// CatchUp is an option of Scheduler.Register setting the entry's catch-up
// window: a new term enqueues the latest tick it finds missed no longer
// than window ago (DefaultCatchUp when not given). CatchUp(0) enqueues no
// missed tick.
func CatchUp(window time.Duration) asynq.Option { return schedOption{catchUpOpt, window} }

// validName reports whether name is a valid EntryName.
func validName(name string) bool {
	if name == "" || len(name) > MaxEntryName {
		return false
	}
	for _, c := range []byte(name) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

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
	// enqueued (by another term), matches ErrDuplicateTask when the entry
	// has UniqueEntry and its previous task is still alive (the tick is
	// recorded, not enqueued), and is the enqueue's error otherwise; the
	// tick is then tried again until the entry's next tick is due or the
	// term ends.
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
