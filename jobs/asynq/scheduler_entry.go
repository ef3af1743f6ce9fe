package asynqlock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/robfig/cron/v3"

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
	unique   *uniqueOption  // UniqueEntry's, if given
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
		case uniqueEntryOpt:
			u, _ := o.Value().(uniqueOption)
			if _, err := u.config(); err != nil {
				return lockdriver.InvalidArgument(op, err.Error())
			}
			e.unique = &u
			e.opts = append(e.opts, o) // in the content hash; taken out at the enqueue
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

// maxSpecDays bounds the days a spec's next tick is searched over: eight
// years, so a leap day spec finds its next tick across a century's
// skipped leap year.
const maxSpecDays = 8*366 + 2

// spec is a parsed cronspec: robfig/cron's fields, and the rule for the
// local times that daylight saving time skips or repeats (docs/asynq.md,
// "Daylight saving time"), which ISC cron follows.
type spec struct {
	every time.Duration // "@every d": ticks at the multiples of d since the Unix epoch
	s     *cron.SpecSchedule
	loc   *time.Location
	fixed bool // neither the minute nor the hour is a wildcard
}

// minEvery is the shortest "@every" period accepted, as asynq's and
// robfig/cron's: a tick costs a few round trips to Redis.
const minEvery = time.Second

// parseSpec parses cronspec as asynq.Scheduler does (robfig/cron's
// standard parser), with its panics turned into errors, but "@every d"
// exactly: robfig/cron rounds d down to whole seconds.
func parseSpec(cronspec string) (sp *spec, err error) {
	if d, ok, err := parseEvery(cronspec); ok {
		if err != nil {
			return nil, err
		}
		return &spec{every: d}, nil
	}
	defer func() {
		if r := recover(); r != nil {
			sp, err = nil, fmt.Errorf("the cron parser failed: %v", r)
		}
	}()
	sched, err := cron.ParseStandard(cronspec)
	if err != nil {
		return nil, err
	}
	switch s := sched.(type) {
	case *cron.SpecSchedule:
		loc := s.Location
		if loc == time.Local {
			loc = time.UTC // asynq's default
		}
		return &spec{s: s, loc: loc, fixed: fixedTime(cronspec)}, nil
	}
	return nil, fmt.Errorf("unknown schedule %T", sched)
}

// parseEvery parses an "@every d" cronspec (after an optional time zone
// prefix, which does not change its ticks); ok is false for any other.
// d must be at least minEvery: "@every 0s" and "@every -5s" are refused.
func parseEvery(cronspec string) (d time.Duration, ok bool, err error) {
	f := strings.Fields(cronspec)
	if len(f) > 0 && (strings.HasPrefix(f[0], "CRON_TZ=") || strings.HasPrefix(f[0], "TZ=")) {
		f = f[1:]
	}
	if len(f) == 0 || f[0] != "@every" {
		return 0, false, nil
	}
	if len(f) != 2 {
		return 0, true, errors.New("@every takes one duration")
	}
	if d, err = time.ParseDuration(f[1]); err != nil {
		return 0, true, err
	}
	if d < minEvery {
		return 0, true, fmt.Errorf("@every %s: the period must be at least %s", f[1], minEvery)
	}
	return d, true, nil
}

// fixedTime reports whether cronspec names fixed times of day: neither its
// minute nor its hour field starts with a wildcard ("*" or "?"), as ISC
// cron tells them apart. Of the descriptors, only @hourly is not.
func fixedTime(cronspec string) bool {
	f := strings.Fields(cronspec)
	if len(f) > 0 && (strings.HasPrefix(f[0], "CRON_TZ=") || strings.HasPrefix(f[0], "TZ=")) {
		f = f[1:]
	}
	switch {
	case len(f) == 1:
		return f[0] != "@hourly"
	case len(f) < 2:
		return false
	}
	wild := func(s string) bool { return strings.HasPrefix(s, "*") || strings.HasPrefix(s, "?") }
	return !wild(f[0]) && !wild(f[1])
}

// next returns the spec's first tick after t, in UTC (zero when there is
// none within maxSpecDays).
func (sp *spec) next(t time.Time) time.Time {
	if sp.every > 0 {
		d := int64(sp.every)
		return time.Unix(0, (t.UnixNano()/d+1)*d).UTC()
	}
	lt := t.In(sp.loc)
	day := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	for range maxSpecDays {
		if best, ok := sp.nextOnDay(day, t); ok {
			return best
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{}
}

// nextOnDay returns the earliest tick after t among the local times of
// day (its date, as a UTC midnight).
func (sp *spec) nextOnDay(day, t time.Time) (time.Time, bool) {
	if !sp.dayMatches(day) {
		return time.Time{}, false
	}
	lo, hi := sp.offsets(day)
	var best time.Time
	for h := range 24 {
		if sp.s.Hour&(1<<uint(h)) == 0 {
			continue
		}
		for m := range 60 {
			if sp.s.Minute&(1<<uint(m)) == 0 {
				continue
			}
			wall := day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
			if !wall.Add(-lo).After(t) {
				continue // every instant of wall is at or before t
			}
			if !best.IsZero() && wall.Add(-hi).After(best) {
				return best, true // every instant of wall is after best
			}
			for _, at := range sp.instants(wall) {
				if at.After(t) && (best.IsZero() || at.Before(best)) {
					best = at
				}
			}
		}
	}
	return best, !best.IsZero()
}

// offsets returns the least and the greatest UTC offset of the zone
// around day, bounding the instants of its local times.
func (sp *spec) offsets(day time.Time) (lo, hi time.Duration) {
	lo, hi = 24*time.Hour, -24*time.Hour
	for _, h := range []time.Duration{-12, 12, 36} {
		_, off := day.Add(h * time.Hour).In(sp.loc).Zone()
		d := time.Duration(off) * time.Second
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

// dayMatches applies the day of month, month and day of week fields as
// cron does: the day fields are or-ed unless either is a wildcard.
func (sp *spec) dayMatches(day time.Time) bool {
	const star = 1 << 63 // robfig/cron marks a field given as "*" or "?"
	if sp.s.Month&(1<<uint(day.Month())) == 0 {
		return false
	}
	dom := sp.s.Dom&(1<<uint(day.Day())) != 0
	dow := sp.s.Dow&(1<<uint(day.Weekday())) != 0
	if sp.s.Dom&star != 0 || sp.s.Dow&star != 0 {
		return dom && dow
	}
	return dom || dow
}

// instants returns the ticks of the local time wall (a UTC time holding
// the local date and time): one for a time that exists once; for a time
// that DST repeats, both for a wildcard spec, the first for a fixed one;
// for a time that DST skips, none for a wildcard spec, the first instant
// after the gap for a fixed one. It assumes the zone changes its offset
// at most once within a day of wall.
func (sp *spec) instants(wall time.Time) []time.Time {
	_, before := wall.Add(-24 * time.Hour).In(sp.loc).Zone()
	_, after := wall.Add(24 * time.Hour).In(sp.loc).Zone()
	var out []time.Time
	for i, off := range []int{before, after} {
		at := wall.Add(-time.Duration(off) * time.Second)
		if _, o := at.In(sp.loc).Zone(); o != off || (i == 1 && before == after) {
			continue
		}
		if len(out) == 1 && sp.fixed {
			break // repeated: a fixed time runs at its first occurrence
		}
		out = append(out, at.UTC())
	}
	if len(out) == 0 && sp.fixed { // skipped: run as the clock jumps past it
		start, _ := wall.Add(-time.Duration(before) * time.Second).In(sp.loc).ZoneBounds()
		out = append(out, start.UTC())
	}
	return out
}

// enqueueOptions are the options of the enqueue of a tick with task id
// id, kept by asynq for retention.
func (e *entry) enqueueOptions(id string, retention time.Duration) []EnqueueOption {
	opts := make([]asynq.Option, 0, len(e.opts)+2)
	for _, o := range e.opts {
		if o.Type() != uniqueEntryOpt {
			opts = append(opts, o)
		}
	}
	eopts := []EnqueueOption{TaskOptions(append(opts, asynq.TaskID(id), asynq.Retention(retention))...)}
	if e.unique != nil {
		eopts = append(eopts, *e.unique)
	}
	return eopts
}
