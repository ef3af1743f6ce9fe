package asynqlock

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/robfig/cron/v3"

	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// maxCatchUpSteps bounds the ticks walked to find the latest one of a
// window, so a tiny period under a long TTL costs a bounded loop.
const maxCatchUpSteps = 10000

// entry is one registration: a schedule and the task it enqueues.
type entry struct {
	id       string
	spec     string
	sched    cron.Schedule
	every    time.Duration // "@every": ticks at its multiples since the Unix epoch
	period   time.Duration // the gap between the first two ticks after registration
	task     *asynq.Task
	opts     []asynq.Option
	retained time.Duration // the Retention given in opts, if any
}

// newEntry parses cronspec with the parser asynq.Scheduler uses and checks
// the task and its options, before any I/O.
func newEntry(cronspec string, task *asynq.Task, opts []asynq.Option, now time.Time) (*entry, error) {
	const op = "register"
	if task == nil {
		return nil, lockdriver.InvalidArgument(op, "task is nil")
	}
	if strings.TrimSpace(task.Type()) == "" {
		return nil, lockdriver.InvalidArgument(op, "task type is empty")
	}
	sched, err := parseSpec(cronspec)
	if err != nil {
		return nil, lockdriver.InvalidArgument(op, "cronspec "+quote(cronspec)+" is not valid: "+err.Error())
	}
	e := &entry{spec: cronspec, sched: sched, task: task, opts: slices.Clone(opts)}
	if d, ok := sched.(cron.ConstantDelaySchedule); ok {
		e.every = d.Delay
	}
	for _, o := range opts {
		switch o.Type() {
		case asynq.TaskIDOpt:
			return nil, lockdriver.InvalidArgument(op, "asynq.TaskID is set by the scheduler for each tick")
		case asynq.RetentionOpt:
			e.retained, _ = o.Value().(time.Duration)
		}
	}
	first := e.next(now)
	if first.IsZero() {
		return nil, lockdriver.InvalidArgument(op, "cronspec "+quote(cronspec)+" never fires")
	}
	if second := e.next(first); !second.IsZero() {
		e.period = second.Sub(first)
	} else {
		e.period = first.Sub(now)
	}
	e.id = entryID(cronspec, task, opts)
	return e, nil
}

func quote(s string) string { return "\"" + s + "\"" }

// parseSpec is cron.ParseStandard, with its panics (robfig/cron v3.0.1
// slices out of range on a spec such as "TZ=" with nothing after the zone)
// turned into errors.
func parseSpec(cronspec string) (sched cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, fmt.Errorf("the cron parser failed: %v", r)
		}
	}()
	return cron.ParseStandard(cronspec)
}

// entryID hashes what makes an entry: cronspec, task type, payload,
// headers and options (their asynq String forms, in order).
func entryID(cronspec string, task *asynq.Task, opts []asynq.Option) string {
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	field(cronspec)
	field(task.Type())
	field(string(task.Payload()))
	headers := task.Headers()
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		field("header " + k + "=" + headers[k])
	}
	for _, o := range opts {
		field(o.String())
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// TickID returns the asynq task id of the tick at of the entry entryID of
// a Scheduler on key: "asynqlock:<lockdriver.HashKey(key)>:<entryID>:<at
// in RFC 3339, UTC>". Every replica derives the same id, so asynq enqueues
// a tick once; use it to find a tick's task with an asynq.Inspector.
func TickID(key, entryID string, at time.Time) string {
	nkey, err := lockdriver.NormalizeKey(key)
	if err != nil {
		nkey = key
	}
	return "asynqlock:" + lockdriver.HashKey(nkey) + ":" + entryID + ":" + at.UTC().Format(time.RFC3339)
}

// next returns the entry's first tick after t (zero when it never fires).
func (e *entry) next(t time.Time) time.Time {
	if e.every > 0 {
		d := int64(e.every)
		return time.Unix(0, (t.UnixNano()/d+1)*d).UTC()
	}
	return e.sched.Next(t.UTC()).UTC()
}

// latest returns the entry's last tick in [from, to], if any. A cron
// spec's ticks are walked from from (at most maxCatchUpSteps of them: a
// term's slots never lag further than its lease lives); "@every" ticks are
// computed.
func (e *entry) latest(from, to time.Time) (time.Time, bool) {
	if e.every > 0 {
		d := int64(e.every)
		last := time.Unix(0, to.UnixNano()/d*d).UTC()
		return last, !last.Before(from)
	}
	var last time.Time
	t := e.next(from.Add(-time.Nanosecond))
	for i := 0; i < maxCatchUpSteps && !t.IsZero() && !t.After(to); i++ {
		last = t
		t = e.next(t)
	}
	return last, !last.IsZero()
}

// window is how far back a new term looks for a tick missed in the
// failover: the term's TTL (how long a dead leader's term can last) plus
// one period.
func (e *entry) window(ttl time.Duration) time.Duration { return ttl + e.period }

// retention is how long asynq keeps a tick's completed task, and so its
// task id: the Retention given at Register, but at least the catch-up
// window plus one period, so no term can enqueue a tick again after its
// task is gone.
func (e *entry) retention(ttl time.Duration) time.Duration {
	return max(e.retained, e.window(ttl)+e.period)
}
