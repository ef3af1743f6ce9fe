package asynqlock

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Defaults of UniqueUntilDone.
const (
	// UniquePrefix namespaces the keys of UniqueUntilDone, apart from a
	// Guard's DefaultPrefix: the Guard locks its own key while the task
	// runs, and the unique key as well.
	UniquePrefix = "asynq-unique:"
	// DefaultUniqueBackstop is how long a key stays taken at most without
	// a running task holding it, when UniqueBackstop is not given.
	DefaultUniqueBackstop = 24 * time.Hour
	// DefaultUniqueLease is the lease a Guard holds on the key while the
	// task runs, when UniqueLease is not given.
	DefaultUniqueLease = DefaultTTL
	// uniqueWait bounds how long a producer or a Guard waits for another
	// one that is deciding on the same key (a few round trips).
	uniqueWait = 2 * time.Second
	// uniqueTries bounds the task ids a producer tries when the next one
	// of the key's sequence is taken by a finished task.
	uniqueTries = 3
)

// uniqueHeaderName is the task header that carries a unique task's key
// and settings from Enqueue to the Guard that runs it.
const uniqueHeaderName = "syncguard-unique"

// ErrDuplicateTask is matched by Enqueue's error when UniqueUntilDone
// refused the task: a task with its key is still alive.
var ErrDuplicateTask = errors.New("asynqlock: duplicate task")

// DuplicateTaskError is Enqueue's error for a refused duplicate. It
// matches ErrDuplicateTask.
type DuplicateTaskError struct {
	// TaskID and Queue name the live task with the key. TaskID is empty
	// when a Guard runs a task whose record has expired (it ran longer
	// than the backstop); Queue is then the refused task's.
	TaskID, Queue string
}

// Error implements error.
func (e *DuplicateTaskError) Error() string {
	if e.TaskID == "" {
		return "asynqlock: duplicate task: the key is held by a running task"
	}
	return "asynqlock: duplicate task: task " + strconv.Quote(e.TaskID) + " in queue " + strconv.Quote(e.Queue) + " has the key"
}

// Is reports whether target is ErrDuplicateTask.
func (e *DuplicateTaskError) Is(target error) bool { return target == ErrDuplicateTask }

// UniqueOption configures UniqueUntilDone.
type UniqueOption interface {
	applyUnique(*uniqueConfig)
}

type uniqueOptionFunc func(*uniqueConfig)

func (f uniqueOptionFunc) applyUnique(c *uniqueConfig) { f(c) }

// UniqueKey names the key, instead of the task's queue, type and payload
// (DefaultKeyIn). The key is unique across queues; it must not be empty.
func UniqueKey(key string) UniqueOption {
	return uniqueOptionFunc(func(c *uniqueConfig) { c.key, c.keySet = key, true })
}

// UniqueBackstop sets how long a key stays taken at most while no Guard
// runs its task, counted from when the task is due (asynq.ProcessIn and
// ProcessAt are added) and from each failed attempt: DefaultUniqueBackstop
// by default. It must be at least the lease, and should exceed the
// longest retry delay.
func UniqueBackstop(d time.Duration) UniqueOption {
	return uniqueOptionFunc(func(c *uniqueConfig) { c.backstop = d })
}

// UniqueLease sets the lease a Guard holds on the key while the task
// runs, extended every third of it: a worker that dies frees the key
// about two leases after its last extension (docs/asynq.md says why).
// DefaultUniqueLease by default.
func UniqueLease(d time.Duration) UniqueOption {
	return uniqueOptionFunc(func(c *uniqueConfig) { c.lease = d })
}

type uniqueConfig struct {
	b        lock.Backend
	rec      lock.Recorder
	insp     *asynq.Inspector
	key      string
	keySet   bool
	backstop time.Duration
	lease    time.Duration
}

type uniqueOption struct {
	b    lock.Backend
	insp *asynq.Inspector
	opts []UniqueOption
}

func (o uniqueOption) applyEnqueue(c *enqueueConfig) { c.unique = &o }

// UniqueUntilDone makes Enqueue refuse the task while a task with the same
// key is alive: pending, scheduled, retrying or running. The refusal is an
// error matching ErrDuplicateTask (a *DuplicateTaskError naming the live
// task); of producers racing on one key, exactly one enqueues. The key
// frees when the task succeeds, is archived, or is deleted (through the
// Inspector or the CLI); when the worker running it dies, about two
// leases later; and, while no Guard runs it, after the backstop. b stores the key (it must
// be a lock.Recorder, and the workers' Guards must use the same store),
// insp looks up the recorded task's state. Run the tasks' handlers through
// a Guard: it holds the key while a task runs. asynq.Unique beside it is
// refused. The enqueue returns by ctx's deadline also while Redis stalls:
// a NetworkTimeout *lock.Error matching context.DeadlineExceeded, after
// which the task may still be enqueued (the next enqueue of the key finds
// it). docs/asynq.md has the details.
func UniqueUntilDone(b lock.Backend, insp *asynq.Inspector, opts ...UniqueOption) EnqueueOption {
	return uniqueOption{b: b, insp: insp, opts: opts}
}

// config validates o before any I/O.
func (o *uniqueOption) config() (uniqueConfig, error) {
	c := uniqueConfig{b: o.b, insp: o.insp, backstop: DefaultUniqueBackstop, lease: DefaultUniqueLease}
	for _, opt := range o.opts {
		if opt != nil {
			opt.applyUnique(&c)
		}
	}
	c.rec, _ = o.b.(lock.Recorder)
	const op = "enqueue"
	switch {
	case o.b == nil:
		return c, lockdriver.InvalidArgument(op, "unique: nil lock backend")
	case c.rec == nil:
		return c, lockdriver.InvalidArgument(op, "unique: the backend must implement lock.Recorder")
	case o.insp == nil:
		return c, lockdriver.InvalidArgument(op, "unique: nil asynq inspector")
	case c.keySet && c.key == "":
		return c, lockdriver.InvalidArgument(op, "unique: empty key")
	case c.lease < MinTTL:
		return c, lockdriver.InvalidArgument(op, "unique: lease must be at least "+MinTTL.String())
	case c.backstop < c.lease:
		return c, lockdriver.InvalidArgument(op, "unique: backstop "+c.backstop.String()+" is shorter than the lease "+c.lease.String())
	}
	return c, nil
}

// uniqueRecord is what the key records about its task: which task, in
// which queue, the task id sequence number, the retry count of the last
// attempt that failed and will be retried (-1 when none), and when a
// producer first found the task running with no Guard holding the key
// (at which retry count, and the backend's time in Unix ms).
type uniqueRecord struct {
	ID            string `json:"id"`
	Queue         string `json:"queue"`
	Seq           int    `json:"seq,omitempty"`
	Ended         int    `json:"ended"`
	OrphanRetried int    `json:"orphanRetried,omitempty"`
	OrphanMs      int64  `json:"orphanMs,omitempty"`
}

// readRecord returns the key's record; ok is false when there is none.
// A record that does not parse is taken as none: it frees the key.
func readRecord(ctx context.Context, r lock.Recorder, key string) (rec uniqueRecord, ok bool, err error) {
	raw, ok, err := r.Record(ctx, key)
	if err != nil || !ok {
		return rec, false, err
	}
	return rec, json.Unmarshal(raw, &rec) == nil && rec.ID != "", nil
}

// liveness is what asynq's state of a recorded task says of its key.
type liveness int

const (
	dead      liveness = iota // gone, archived or completed: the key is free
	alive                     // waiting, or between a failed attempt and its retry
	unguarded                 // running, and no Guard is known to hold the key
)

// liveness looks the recorded task up in asynq, returning its retry
// count too. An active task is unguarded unless its last attempt failed
// and asynq has not moved it to retry yet: a Guard running it holds the
// key, which the caller may not know. Whether it is running under a
// Guard, about to be (its Guard waits for the key), or its worker died,
// the key's lease and the record's orphan mark tell.
func (rec uniqueRecord) liveness(ctx context.Context, insp *asynq.Inspector) (liveness, int, error) {
	info, err := bounded(ctx, func() (*asynq.TaskInfo, error) { return insp.GetTaskInfo(rec.Queue, rec.ID) })
	switch {
	case errors.Is(err, asynq.ErrTaskNotFound), errors.Is(err, asynq.ErrQueueNotFound):
		return dead, 0, nil
	case err != nil:
		return dead, 0, fmt.Errorf("asynqlock: unique: look up task %q: %w", rec.ID, err)
	}
	switch info.State {
	case asynq.TaskStatePending, asynq.TaskStateScheduled, asynq.TaskStateRetry, asynq.TaskStateAggregating:
		return alive, info.Retried, nil
	case asynq.TaskStateActive:
		if info.Retried == rec.Ended {
			return alive, info.Retried, nil
		}
		return unguarded, info.Retried, nil
	}
	return dead, info.Retried, nil // archived or completed
}

// uniqueEnqueue is an enqueue under UniqueUntilDone: the key's checks
// and the enqueue run under a short lease of the key, whose release
// writes the new record in the same step, so producers on one key take
// turns and each sees the record of the one before.
type uniqueEnqueue struct {
	uniqueConfig
	c      *asynq.Client
	t      *asynq.Task // with the unique header
	opts   []asynq.Option
	queue  string
	key    string // the lock key, prefixed and normalised
	userID string // the caller's asynq.TaskID, if any
}

// newUniqueEnqueue validates the unique enqueue of t before any I/O.
func newUniqueEnqueue(c *asynq.Client, t *asynq.Task, cfg *enqueueConfig) (*uniqueEnqueue, error) {
	uc, err := cfg.unique.config()
	if err != nil {
		return nil, err
	}
	u := &uniqueEnqueue{uniqueConfig: uc, c: c, opts: cfg.taskOpts, queue: queueOf(t, cfg.taskOpts)}
	if _, ok := optionOf(t, cfg.taskOpts, asynq.UniqueOpt); ok {
		return nil, lockdriver.InvalidArgument("enqueue",
			"asynq.Unique beside UniqueUntilDone: asynq's key would outlive or undercut the task; use one of them")
	}
	if id, ok := optionOf(t, cfg.taskOpts, asynq.TaskIDOpt); ok {
		u.userID, _ = id.(string)
	}
	key := u.uniqueConfig.key
	if !u.keySet {
		key = DefaultKeyIn(u.queue, t)
	}
	if u.key, err = lockdriver.NormalizeKey(UniquePrefix + key); err != nil {
		return nil, err
	}
	header := uniqueHeader{key: u.key, lease: u.lease, backstop: u.backstop}.String()
	var ok bool
	if u.t, ok = withHeaders(t, map[string]string{uniqueHeaderName: header}); !ok {
		return nil, lockdriver.InvalidArgument("enqueue", "unique: this asynq version's task options cannot be carried over")
	}
	return u, nil
}

// run takes the key (waiting for another producer that holds it), refuses
// the task if the recorded one is alive, else enqueues it and records it.
func (u *uniqueEnqueue) run(ctx context.Context) (*asynq.TaskInfo, error) {
	l, fresh, err := u.take(ctx)
	if err != nil {
		return nil, err
	}
	info, rec, err := u.decide(ctx, l, fresh)
	// The release goes on under a context of its own after ctx ends (its
	// outcome is the caller's, the task already enqueued or not); if it
	// fails, the key's lease ends at its TTL and the next producer finds
	// the task by its id in the key's sequence.
	_, _ = bounded(ctx, func() (struct{}, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReleaseTimeout)
		defer cancel()
		var rerr error
		if rec != nil {
			rerr = u.rec.ReleaseRecord(rctx, l, rec, u.backstop+u.delay())
		} else {
			rerr = u.b.Release(rctx, l.ID)
		}
		if rerr != nil {
			logReleaseError(l, rerr)
		}
		return struct{}{}, nil
	})
	return info, err
}

// bounded returns f's results, or once ctx ends first an error matching
// ctx's (lock.CodeNetworkTimeout for its deadline, else CodeAborted) while
// f goes on in the background. asynq's Inspector takes no context, and
// its client's calls wait for Redis past their context's deadline unless
// the go-redis client sets ContextTimeoutEnabled: a stalled Redis would
// hold the enqueue as long as go-redis waits (its timeouts and retries).
func bounded[T any](ctx context.Context, f func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return f()
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		select {
		case r := <-done:
			return r.v, r.err
		default:
		}
	}
	code := lock.CodeAborted
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		code = lock.CodeNetworkTimeout
	}
	var zero T
	return zero, &lock.Error{Code: code, Op: "enqueue", Msg: "no answer from Redis by the context's end; the call may still run", Err: ctx.Err()}
}

// take takes the key; fresh: it had no record when taken. A record that
// names a task alive whoever holds the key refuses the task at once,
// without taking the key (one round trip and the task's lookup). A key
// held by a Guard refuses it too; one held by another producer is waited
// for.
func (u *uniqueEnqueue) take(ctx context.Context) (l lock.Lease, fresh bool, err error) {
	l, raw, err := u.rec.AcquireRecord(ctx, u.key, u.lease)
	switch {
	case err == nil && raw == nil:
		return l, true, nil
	case err == nil:
		var rec uniqueRecord
		if json.Unmarshal(raw, &rec) == nil && rec.ID != "" {
			if lv, _, aerr := rec.liveness(ctx, u.insp); aerr != nil || lv == alive {
				return l, false, duplicate(rec, aerr)
			}
		}
		l, err = u.rec.Acquire(ctx, u.key, u.lease)
	case errors.Is(err, errors.ErrUnsupported):
		l, err = u.rec.Acquire(ctx, u.key, u.lease)
	}
	if errors.Is(err, lock.ErrLocked) {
		// A Guard running the recorded task, or a producer deciding.
		rec, ok, rerr := readRecord(ctx, u.rec, u.key)
		if rerr != nil {
			return l, false, fmt.Errorf("asynqlock: unique: %w", rerr)
		}
		if ok {
			if lv, _, aerr := rec.liveness(ctx, u.insp); aerr != nil || lv != dead {
				return l, false, duplicate(rec, aerr)
			}
		}
		l, err = lock.Acquire(ctx, u.b, u.key, lock.WithTTL(u.lease), lock.WithWait(uniqueWait))
		if !ok && errors.Is(err, lock.ErrLocked) {
			return l, false, u.heldPastWait(ctx)
		}
	}
	if err != nil {
		return l, false, fmt.Errorf("asynqlock: unique: %w", err)
	}
	return l, false, nil
}

// heldPastWait is the refusal of a key still held after the wait, when
// no record was there before it: the producer that held it has written
// its task's record since and a Guard runs that task (its id is given),
// or a Guard runs a task whose record expired (it ran longer than the
// backstop: no id to give).
func (u *uniqueEnqueue) heldPastWait(ctx context.Context) error {
	rec, ok, err := readRecord(ctx, u.rec, u.key)
	if err != nil {
		return fmt.Errorf("asynqlock: unique: %w", err)
	}
	if ok {
		return duplicate(rec, nil)
	}
	return &DuplicateTaskError{Queue: u.queue}
}

// decide runs while holding the key: the task enqueued, or the error
// refusing it. rec is the record to write with the release, nil for none.
func (u *uniqueEnqueue) decide(ctx context.Context, l lock.Lease, fresh bool) (info *asynq.TaskInfo, rec []byte, err error) {
	var old uniqueRecord
	ok := false
	if !fresh {
		if old, ok, err = readRecord(ctx, u.rec, u.key); err != nil {
			return nil, nil, fmt.Errorf("asynqlock: unique: %w", err)
		}
	}
	if ok {
		if refused, mark, err := u.judge(ctx, old, l); err != nil || refused {
			return nil, mark, duplicate(old, err)
		}
	}
	seq := old.Seq
	for range uniqueTries {
		seq++
		next := uniqueRecord{ID: u.userID, Queue: u.queue, Seq: seq, Ended: -1}
		if next.ID == "" {
			next.ID = uniqueTaskID(u.key, seq)
		}
		rec, _ = json.Marshal(next)
		info, err = bounded(ctx, func() (*asynq.TaskInfo, error) {
			return u.c.EnqueueContext(ctx, u.t, append(u.opts[:len(u.opts):len(u.opts)], asynq.TaskID(next.ID))...)
		})
		switch {
		case err == nil:
			return info, rec, nil
		case !errors.Is(err, asynq.ErrTaskIDConflict):
			return nil, nil, err
		}
		// The id is taken: by a task a producer enqueued without recording
		// it (it stopped in between), or by a finished task asynq retains.
		// A live one is recorded; the caller's own id keeps asynq's error.
		lv, _, aerr := next.liveness(ctx, u.insp)
		switch {
		case aerr != nil:
			return nil, nil, aerr
		case u.userID != "" && lv == dead:
			return nil, nil, err
		case u.userID != "":
			return nil, rec, err
		case lv != dead:
			return nil, rec, duplicate(next, nil)
		}
	}
	return nil, nil, &lock.Error{Code: lock.CodeInternal, Op: "enqueue",
		Err: errors.New("asynqlock: unique: the key's next task ids are all taken by finished tasks")}
}

// judge tells, under the key's lease l, whether the recorded task old
// refuses a new one. A running task with no Guard holding the key is
// taken for dead once it has been seen so for a whole lease: its Guard
// may be waiting for the key (asynq delivered it a moment ago), or its
// worker died and the Guard's lease lapsed. The first producer to see it
// refuses the task and returns the record with its orphan mark, to write
// with the release.
func (u *uniqueEnqueue) judge(ctx context.Context, old uniqueRecord, l lock.Lease) (refused bool, mark []byte, err error) {
	lv, retried, err := old.liveness(ctx, u.insp)
	switch {
	case err != nil:
		return true, nil, err
	case lv != unguarded:
		return lv == alive, nil, nil
	}
	now := l.ExpiresAt.Add(-u.lease).UnixMilli() // by the backend's clock
	if old.OrphanMs != 0 && old.OrphanRetried == retried {
		if now-old.OrphanMs < u.lease.Milliseconds() {
			return true, nil, nil
		}
		guarded, err := u.guardedSince(ctx, old)
		if err != nil || !guarded {
			return err != nil, nil, err
		}
		// A Guard took the key after the mark and lost it since (its lease
		// lapsed: its worker died or stalled, or Redis stalled): a lease
		// counts from now, so that a stalled Guard can still see its loss
		// and stop before the task is taken for dead.
	}
	old.OrphanRetried, old.OrphanMs = retried, now
	mark, _ = json.Marshal(old)
	return true, mark, nil
}

// uniqueRun is what a Guard records, under uniqueRunKey, when it starts
// a task whose record carries an orphan mark: the task, and when the
// Guard took the key (the backend's time in Unix ms). A producer's mark
// set before the Guard took the key is stale.
type uniqueRun struct {
	ID      string `json:"id"`
	StartMs int64  `json:"startMs"`
}

// uniqueRunKey is the key of a unique key's uniqueRun: a hash, so that
// it is valid whatever the length of the key.
func uniqueRunKey(key string) string { return "asynq-unique-run:" + keyHash(key) }

// guardedSince reports whether a Guard took the key to run old's task
// after old's orphan mark.
func (u *uniqueEnqueue) guardedSince(ctx context.Context, old uniqueRecord) (bool, error) {
	raw, ok, err := u.rec.Record(ctx, uniqueRunKey(u.key))
	if err != nil || !ok {
		return false, err
	}
	var run uniqueRun
	return json.Unmarshal(raw, &run) == nil && run.ID == old.ID && run.StartMs >= old.OrphanMs, nil
}

// delay is how long the task waits before it is due: asynq.ProcessIn's
// or asynq.ProcessAt's, so that the backstop counts from when it is due.
func (u *uniqueEnqueue) delay() time.Duration {
	var d time.Duration
	if v, ok := optionOf(u.t, u.opts, asynq.ProcessInOpt); ok {
		d, _ = v.(time.Duration)
	}
	if v, ok := optionOf(u.t, u.opts, asynq.ProcessAtOpt); ok {
		if at, ok := v.(time.Time); ok {
			d = time.Until(at)
		}
	}
	return max(d, 0)
}

// duplicate is the error of a task refused because rec is alive, or the
// lookup's error err when it could not tell.
func duplicate(rec uniqueRecord, err error) error {
	if err != nil {
		return err
	}
	return &DuplicateTaskError{TaskID: rec.ID, Queue: rec.Queue}
}

// uniqueTaskID is the asynq task id of the seq-th task of key, so that a
// producer that stops between its enqueue and its record leaves a task
// the next producer finds.
func uniqueTaskID(key string, seq int) string {
	return "asynqlock-unique:" + keyHash(key) + ":" + strconv.Itoa(seq)
}

// keyHash is a unique key's hash in task ids and uniqueRunKey.
func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// optionOf returns the value of the last option of type typ among t's own
// options and opts.
func optionOf(t *asynq.Task, opts []asynq.Option, typ asynq.OptionType) (v any, ok bool) {
	own, _ := taskOwnOptions(t)
	for _, list := range [2][]asynq.Option{own, opts} {
		for _, o := range list {
			if o != nil && o.Type() == typ {
				v, ok = o.Value(), true
			}
		}
	}
	return v, ok
}
