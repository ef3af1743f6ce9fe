package asynqlock

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// retentionMargin is added to the time a tick's task id must outlive its
// enqueue, for the clocks of the replicas to differ.
const retentionMargin = time.Minute

// entry is one registration: a schedule and the task it enqueues.
type entry struct {
	id       string // the EntryName, or the hash of what identifies the entry
	content  string // the hash of everything the entry does
	spec     *spec
	task     *asynq.Task
	opts     []asynq.Option // asynq's options, by type, the caller's order within a type
	window   time.Duration  // the catch-up window
	retained time.Duration  // the Retention given in opts, if any
}

// newEntry parses cronspec, checks the task and its options, and derives
// the entry's id, before any I/O.
func newEntry(cronspec string, task *asynq.Task, opts []asynq.Option) (*entry, error) {
	const op = "register"
	if task == nil {
		return nil, lockdriver.InvalidArgument(op, "task is nil")
	}
	if strings.TrimSpace(task.Type()) == "" {
		return nil, lockdriver.InvalidArgument(op, "task type is empty")
	}
	cronspec = strings.Join(strings.Fields(cronspec), " ")
	sp, err := parseSpec(cronspec)
	if err != nil {
		return nil, lockdriver.InvalidArgument(op, "cronspec "+strconv.Quote(cronspec)+" is not valid: "+err.Error())
	}
	e := &entry{spec: sp, task: task, window: DefaultCatchUp}
	if err := e.setOptions(opts); err != nil {
		return nil, err
	}
	if sp.next(time.Now()).IsZero() {
		return nil, lockdriver.InvalidArgument(op, "cronspec "+strconv.Quote(cronspec)+" never fires")
	}
	if e.id == "" {
		e.id = hashOf(cronspec, task.Type(), string(task.Payload()))[:16]
	}
	e.content = e.contentHash(cronspec)
	return e, nil
}

// setOptions sorts opts into the entry: the scheduler's own options set
// its name and window, asynq's are kept for the enqueue.
func (e *entry) setOptions(opts []asynq.Option) error {
	const op = "register"
	for i, o := range opts {
		if o == nil {
			return lockdriver.InvalidArgument(op, "option "+strconv.Itoa(i)+" is nil")
		}
		switch o.Type() {
		case entryNameOpt:
			name, _ := o.Value().(string)
			if !validName(name) {
				return lockdriver.InvalidArgument(op, "entry name "+strconv.Quote(name)+" must be 1 to 64 bytes of ASCII letters, digits, '.', '_' and '-'")
			}
			e.id = name
		case catchUpOpt:
			if e.window, _ = o.Value().(time.Duration); e.window < 0 {
				return lockdriver.InvalidArgument(op, "catch-up window is negative")
			}
		case asynq.TaskIDOpt:
			return lockdriver.InvalidArgument(op, "asynq.TaskID is set by the scheduler for each tick")
		case asynq.UniqueOpt:
			return lockdriver.InvalidArgument(op, "asynq.Unique does not apply: each tick's task id already deduplicates it (and Unique's lock would block the ticks after a failover)")
		case asynq.RetentionOpt:
			e.retained, _ = o.Value().(time.Duration)
			e.opts = append(e.opts, o)
		default:
			e.opts = append(e.opts, o)
		}
	}
	slices.SortStableFunc(e.opts, func(a, b asynq.Option) int { return int(a.Type()) - int(b.Type()) })
	return nil
}

// contentHash hashes everything the entry does: its id, cronspec, task
// (type, payload, headers), asynq's options and catch-up window. Replicas
// whose entries of one id hash differently do not agree on the entry.
func (e *entry) contentHash(cronspec string) string {
	fields := []string{e.id, cronspec, e.task.Type(), string(e.task.Payload()), e.window.String()}
	headers := e.task.Headers()
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		fields = append(fields, "header "+k+"="+headers[k])
	}
	for _, o := range e.opts {
		fields = append(fields, o.String())
	}
	return hashOf(fields...)[:16]
}

// hashOf returns the hex SHA-256 of fields, each ended by a NUL.
func hashOf(fields ...string) string {
	h := sha256.New()
	for _, f := range fields {
		h.Write([]byte(f))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TickID returns the asynq task id of the tick at of the entry entryID of
// a Scheduler on key: "asynqlock:<lockdriver.HashKey(key)>:<entryID>:<at
// in RFC 3339, UTC>", with the fraction of a second only when it is not 0
// (an "@every 1500ms" tick). Every replica derives the same id, so asynq enqueues
// a tick once; use it to find a tick's task with an asynq.Inspector.
func TickID(key, entryID string, at time.Time) string {
	nkey, err := lockdriver.NormalizeKey(key)
	if err != nil {
		nkey = key
	}
	return "asynqlock:" + lockdriver.HashKey(nkey) + ":" + entryID + ":" + at.UTC().Format(time.RFC3339Nano)
}

// next returns the entry's first tick after t (zero when it never fires).
func (e *entry) next(t time.Time) time.Time { return e.spec.next(t) }

// latest returns the entry's last tick in (after, to], if any.
func (e *entry) latest(after, to time.Time) (time.Time, bool) {
	var last time.Time
	for t := e.next(after); !t.IsZero() && !t.After(to); t = e.next(t) {
		last = t
		if e.spec.every > 0 { // computed, not walked
			d := int64(e.spec.every)
			last = time.Unix(0, to.UnixNano()/d*d).UTC()
			break
		}
	}
	return last, !last.IsZero()
}

// retention is how long asynq keeps the task of the tick at, and so its
// task id: long enough for any term that may still try the tick (a term
// catching up tries it until the next tick or the window's end), and at
// least the entry's own asynq.Retention.
func (e *entry) retention(at time.Time) time.Duration {
	until := e.window
	if next := e.next(at); !next.IsZero() {
		until = min(until, next.Sub(at))
	}
	return max(e.retained, until+retentionMargin)
}

// recordTTL is how long the entry's record written at now after the tick
// at must last: until a term may write the next one, the next tick's
// catch-up included, plus the term's TTL for a failover.
func (e *entry) recordTTL(at, now time.Time, ttl time.Duration) time.Duration {
	d := e.window + ttl + retentionMargin
	if next := e.next(at); !next.IsZero() {
		d += max(next.Sub(now), 0)
	}
	return d
}
