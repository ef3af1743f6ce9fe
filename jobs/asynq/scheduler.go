package asynqlock

import (
	"context"
	"sync"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Scheduler enqueues periodic asynq tasks from every replica of a service
// while only one of them, the leader elected on its key, does the
// enqueueing. Its methods are shaped like asynq.Scheduler's.
//
// Each tick of each entry is enqueued once across the replicas: the task
// of a tick carries a TaskID made of the key, the entry and the scheduled
// time (TickID), which asynq refuses to enqueue twice while the task, or
// its retention after completion, lasts. The leader checks its term
// before each enqueue. After a failover the new leader enqueues the latest
// tick it finds missing within the catch-up window (the term's TTL plus
// the entry's period). docs/asynq.md has the guarantees and their limits.
//
// A Scheduler is safe for concurrent use.
type Scheduler struct {
	client   *asynq.Client
	b        lock.Backend
	key      string
	identity string
	opts     []lock.Option

	mu      sync.Mutex
	entries map[string]*entry
	onTick  func(Tick)
	running bool
	changed chan struct{} // a registration changed: the term re-reads entries
}

// Tick is what became of one tick of an entry in the leader's hands, as
// given to the function set with OnTick.
type Tick struct {
	// EntryID is the entry's id, as returned by Register.
	EntryID string
	// At is the tick's scheduled time, in UTC.
	At time.Time
	// TaskID is the asynq task id of the tick (TickID).
	TaskID string
	// Fence is the fence of the term that tried to enqueue it.
	Fence lock.Fence
	// CatchUp is true for a tick the term enqueued on its start because it
	// fell in the gap before it.
	CatchUp bool
	// Err is nil when this process enqueued the task, matches
	// asynq.ErrTaskIDConflict when the task was already enqueued (by an
	// earlier term), and is the enqueue's error otherwise; the tick is then
	// tried again until the entry's next tick is due or the term ends.
	Err error
}

// NewScheduler returns a Scheduler that campaigns on key as identity with
// client enqueueing the tasks. opts are those of election.Lead (lock.WithTTL
// sets the term's TTL, which bounds the failover time). It returns a
// *lock.Error with lock.CodeInvalidArgument for a nil client or backend, an
// invalid key, an empty identity or a bad option, without I/O.
func NewScheduler(client *asynq.Client, b lock.Backend, key, identity string, opts ...lock.Option) (*Scheduler, error) {
	const op = "new_scheduler"
	switch {
	case client == nil:
		return nil, lockdriver.InvalidArgument(op, "asynq client is nil")
	case b == nil:
		return nil, lockdriver.InvalidArgument(op, "lock backend is nil")
	case key == "":
		return nil, lockdriver.InvalidArgument(op, "key is empty")
	case identity == "":
		return nil, lockdriver.InvalidArgument(op, "identity is empty")
	}
	nkey, err := lockdriver.NormalizeKey(key)
	if err != nil {
		return nil, err
	}
	if err := lockdriver.ValidateOptions(opts...); err != nil {
		return nil, err
	}
	return &Scheduler{
		client: client, b: b, key: nkey, identity: identity, opts: opts,
		entries: map[string]*entry{},
		changed: make(chan struct{}, 1),
	}, nil
}

// Register adds an entry that enqueues task with opts at every tick of
// cronspec, and returns its id. cronspec is parsed as asynq.Scheduler
// parses it (robfig/cron's standard parser: five fields, or descriptors
// such as "@daily" and "@every 30s"), in UTC unless it starts with
// CRON_TZ=; "@every d" ticks at the multiples of d since the Unix epoch,
// so every replica computes the same ticks.
//
// The id is derived from cronspec, the task's type, payload and headers,
// and opts, so every replica registering the same entry gets the same id
// and enqueues the same task ids. Registering an entry again returns its
// id. The Scheduler sets each tick's asynq.TaskID and a retention of at
// least the catch-up window plus a period; a TaskID in opts is an error.
// Bad input (nil task, empty type, a cronspec the parser rejects or that
// never fires) is a *lock.Error with lock.CodeInvalidArgument.
func (s *Scheduler) Register(cronspec string, task *asynq.Task, opts ...asynq.Option) (entryID string, err error) {
	e, err := newEntry(cronspec, task, opts, time.Now())
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if _, ok := s.entries[e.id]; !ok {
		s.entries[e.id] = e
	}
	s.mu.Unlock()
	s.signal()
	return e.id, nil
}

// Unregister removes the entry with the given id; its ticks from then on
// are not enqueued by this replica. It returns an error when there is no
// such entry.
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
// enqueue while it leads, from the goroutine that enqueues (keep it
// short); nil removes it.
func (s *Scheduler) OnTick(f func(Tick)) {
	s.mu.Lock()
	s.onTick = f
	s.mu.Unlock()
}

// Run campaigns for the key and, while this replica leads, enqueues the
// entries' ticks; when a term is lost it campaigns again. It returns nil
// when ctx ends, releasing a term it holds so the next candidate leads at
// once, and an error when it is already running or the campaign cannot
// go on (an error of election.Lead that is not ctx's).
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
