package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

var showCommand = &command{
	name:    "show",
	args:    "[--json] [--route R] [--scope S] [--key-prefix NS] KEY",
	summary: "one key in full: its lock or limit's slots, fence counter, done marker, stored record, waiters",
	detail: "KEY is the key as the application locks it (as ls prints it), not the Redis key. A lock key\n" +
		"holding anything but syncguard lock data or a concurrency limit's slots for KEY is an error\n" +
		"(exit status 1). A limit shows the n of its latest grant and each live slot (fence, holder as\n" +
		"the hash of its lock id, acquired, expires), earliest expiry first; a read-write lock\n" +
		"(lock/rwlock) each reader or its writer the same way.\n" +
		"For a key of the middleware (httplock, echolock, ginlock, grpclock), give the key the request\n" +
		"carried and its route (--route \"POST /orders\", the method and the route pattern; for gRPC\n" +
		"the full method name, \"/orders.v1.Orders/Create\"), --scope (WithScope's\n" +
		"principal) and --key-prefix (WithPrefix): show builds the name the middleware locks,\n" +
		"<key prefix><route>:<scope>:<key>, escaped as the middleware escapes it, and prints the parts\n" +
		"as written under it. --route takes the route as written or as a key prints it (\\: for :).\n" +
		"A leader election's key (lock/election) shows its leader's identity, the term's fence and the\n" +
		"time left in the term; an asynqlock Scheduler's key also shows the entries (id and content\n" +
		"hash) of its latest term's leader, and an entry's key (<scheduler key>/entry/<id>) its last\n" +
		"tick and the fence of the term that enqueued it. A gocronlock job's key (gocron:<name>) shows\n" +
		"its last run: when its instance fired it (by Redis's clock) and its fence.",
	flags: func(fs *flag.FlagSet, o *options) {
		fs.BoolVar(&o.json, "json", false, "print one JSON object")
		o.keyFlags(fs)
	},
	check: func(o *options, args []string) error {
		_, err := oneKey("show", args)
		return err
	},
	run: runShow,
}

// state is what show reads about one key.
type state struct {
	Key string `json:"key"`
	// Request is the HTTP middleware's key parts that named Key, as
	// written (--route, --scope, --key-prefix); nil without them.
	Request *request `json:"request,omitempty"`
	LockKey string   `json:"lockKey"`
	// Locked says a lock holds the key; a limit's slots are in Limit.
	Locked  bool   `json:"locked"`
	Expired bool   `json:"expired,omitempty"` // a lock or limit past its expiry, not yet removed
	Lock    *lsRow `json:"lock,omitempty"`
	// Limit is the key's concurrency limit, when live slots hold it.
	Limit    *limitShow `json:"limit,omitempty"`
	FenceKey string     `json:"fenceKey"`
	// Counter is the fence counter's value, "" when it does not exist.
	Counter string `json:"fenceCounter"`
	// Striped says the counter is a stripe's, shared by every key hashed
	// to it (Options.FenceStripes): its value is not this key's history.
	Striped bool   `json:"fenceCounterShared,omitempty"`
	DoneKey string `json:"doneKey"`
	// Done is the done marker's value (a fence; asynqlock); DoneTTLMs its
	// time left. Nil when there is none.
	Done      *string `json:"done,omitempty"`
	DoneTTLMs int64   `json:"doneTtlMs,omitempty"`
	// RecordKey is the key of the record stored for a replayed request
	// (lock.Recorder); HasRecord says one is there, RecordBytes is its
	// size and RecordTTLMs its time left.
	RecordKey   string `json:"recordKey"`
	HasRecord   bool   `json:"hasRecord"`
	RecordBytes int    `json:"recordBytes,omitempty"`
	RecordTTLMs int64  `json:"recordTtlMs,omitempty"`
	// Response is the record decoded: the stored response. Record is the
	// value as stored only when it is not a record this version reads
	// (Response nil), so that a record never prints as escaped bytes.
	Response *responseShow `json:"response,omitempty"`
	Record   *string       `json:"record,omitempty"`
	// Tick is the record decoded when it is an asynqlock Scheduler
	// entry's: the entry, its last tick and the term's fence.
	Tick *tickShow `json:"tick,omitempty"`
	// Run is the record decoded when it is a gocronlock Locker's: the
	// job's last run.
	Run *jobRunShow `json:"run,omitempty"`
	// Waiters is the number of waiters queued in Redis for the key.
	Waiters int64 `json:"waiters"`
	// Schedule is the manifest of an asynqlock Scheduler on the key: its
	// leader's entries. Nil when there is none.
	Schedule *scheduleShow `json:"schedule,omitempty"`

	nowMs int64
}

// limitShow is a limit in show: the n of its latest grant and its live
// slots, earliest expiry first. For a read-write lock (lock/rwlock) N is
// 0, ReadWrite is set, and each holder has its mode.
type limitShow struct {
	N         int       `json:"n"`
	ReadWrite bool      `json:"readWrite,omitempty"`
	Holders   []slotRow `json:"holders"`
}

// slotRow is one live slot of a limit.
type slotRow struct {
	Fence      lock.Fence `json:"fence"`
	Holder     string     `json:"holder"` // lockdriver.HashKey of its lock id
	AcquiredAt time.Time  `json:"acquiredAt"`
	ExpiresAt  time.Time  `json:"expiresAt"`
	AgeMs      int64      `json:"ageMs"`
	TTLMs      int64      `json:"ttlMs"`
	Mode       string     `json:"mode,omitempty"` // a read-write lock's: "read" or "write"
}

// newLimitShow describes l as seen at nowMs.
func newLimitShow(l limitData, nowMs int64) *limitShow {
	ls := &limitShow{N: l.latest().n, ReadWrite: l.rw, Holders: make([]slotRow, len(l.slots))}
	for i, s := range l.slots {
		ls.Holders[i] = slotRow{Fence: s.fence, Holder: s.holder(), AcquiredAt: msTime(s.acquiredAtMs),
			ExpiresAt: msTime(s.expiresAtMs), AgeMs: age(nowMs, s.acquiredAtMs), TTLMs: s.expiresAtMs - nowMs,
			Mode: modeName(s.mode)}
	}
	return ls
}

func runShow(ctx context.Context, s *session, o *options, args []string) error {
	key, err := oneKey("show", args)
	if err != nil {
		return err
	}
	st, err := s.read(ctx, keyOf(o, key))
	if err != nil {
		return err
	}
	st.Request = requestOf(o, key)
	if o.json {
		enc := json.NewEncoder(s.env.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	st.print(s.env.Stdout)
	return nil
}

// oneKey returns the KEY argument of show and release.
func oneKey(cmd string, args []string) (string, error) {
	switch len(args) {
	case 0:
		return "", usageErrorf("%s needs a KEY (the key as the application locks it, as ls prints it)", cmd)
	case 1:
		return args[0], nil
	}
	return "", usageErrorf("%s takes one KEY, got %d arguments (quote a key with spaces)", cmd, len(args))
}

// read reads everything about key in one pipeline to the server holding
// it (the master of its slot on a cluster). It fails when the lock key
// holds something that is not a syncguard lock of key.
func (s *session) read(ctx context.Context, key string) (*state, error) {
	keys, err := admin.StorageKeys(s.backend, key)
	if err != nil {
		return nil, usageErrorf("%s", message(err))
	}
	node, err := s.nodeOf(ctx, keys.Lock)
	if err != nil {
		return nil, err
	}
	norm, _ := lockdriver.NormalizeKey(key) // StorageKeys accepted it
	st := &state{Key: norm, LockKey: keys.Lock, FenceKey: keys.Fence, DoneKey: keys.Done, RecordKey: keys.Record,
		Striped: s.names.isStripe(keys.Fence)}
	c := readShowCmds(ctx, node, keys, s.names.queueKey(keys.Lock))
	addr := node.Options().Addr
	if err := c.now.Err(); err != nil {
		return nil, redisError(ctx, addr, err)
	}
	st.nowMs = c.now.Val().UnixMilli()
	if err := s.readLockKey(ctx, node, st, c); err != nil {
		return nil, err
	}
	if err := st.readOthers(ctx, addr, c); err != nil {
		return nil, err
	}
	if st.Schedule, err = s.readSchedule(ctx, norm); err != nil {
		return nil, err
	}
	return st, nil
}

// showCmds is the pipeline of show's read, a command per thing it shows.
type showCmds struct {
	get, counter, done, record *redis.StringCmd
	typ                        *redis.StatusCmd
	doneTTL, recordTTL         *redis.DurationCmd
	waiters                    *redis.IntCmd
	now                        *redis.TimeCmd
}

// readShowCmds reads, in one pipeline to node, the lock key and its type,
// the fence counter, the done marker and the record with their time left,
// the waiter queue's length and the server's TIME. The commands' errors
// are left in them.
func readShowCmds(ctx context.Context, node *redis.Client, keys admin.Keys, queueKey string) showCmds {
	pipe := node.Pipeline()
	c := showCmds{
		get:       pipe.Get(ctx, keys.Lock),
		typ:       pipe.Type(ctx, keys.Lock),
		counter:   pipe.Get(ctx, keys.Fence),
		done:      pipe.Get(ctx, keys.Done),
		doneTTL:   pipe.PTTL(ctx, keys.Done),
		record:    pipe.Get(ctx, keys.Record),
		recordTTL: pipe.PTTL(ctx, keys.Record),
		waiters:   pipe.ZCard(ctx, queueKey),
		now:       pipe.Time(ctx),
	}
	_, _ = pipe.Exec(ctx)
	return c
}

// readLockKey sets in st the lock or limit that c read at the lock key,
// failing when it holds something else.
func (s *session) readLockKey(ctx context.Context, node *redis.Client, st *state, c showCmds) error {
	raw, err := c.get.Result()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil && !isWrongType(err):
		return redisError(ctx, node.Options().Addr, err)
	case err != nil && c.typ.Err() != nil:
		return redisError(ctx, node.Options().Addr, c.typ.Err())
	case err != nil && c.typ.Val() == "zset":
		return s.readLimit(ctx, node, st)
	case err != nil:
		return failf("%s holds a %s, not syncguard lock data", display(st.LockKey), c.typ.Val())
	default:
		d, err := wire.DecodeLockData(raw)
		if err != nil || d.Key != st.Key {
			return failf("%s holds a value that is not syncguard lock data for this key", display(st.LockKey))
		}
		if d.Live(st.nowMs) {
			row := lockRow(st.LockKey, d, st.nowMs)
			st.Locked, st.Lock = true, &row
		} else {
			st.Expired = true
		}
	}
	return nil
}

// readOthers sets in st the fence counter, done marker, record and
// waiters that c read from the server at addr.
func (st *state) readOthers(ctx context.Context, addr string, c showCmds) error {
	if v, err := c.counter.Result(); err == nil {
		st.Counter = v
	} else if !errors.Is(err, redis.Nil) && !isWrongType(err) {
		return redisError(ctx, addr, err)
	}
	if v, err := c.done.Result(); err == nil {
		st.Done = &v
		st.DoneTTLMs = c.doneTTL.Val().Milliseconds()
	}
	if v, err := c.record.Result(); err == nil {
		st.HasRecord, st.RecordBytes = true, len(v)
		st.RecordTTLMs = c.recordTTL.Val().Milliseconds()
		st.decodeRecord(v)
	}
	st.Waiters = c.waiters.Val() // 0 when there is no queue (or it is not a sorted set)
	return nil
}

// readLimit reads the sorted set at st.LockKey into st as a limit of
// st.Key.
func (s *session) readLimit(ctx context.Context, node *redis.Client, st *state) error {
	reads, err := s.readLimits(ctx, node, []string{st.LockKey}, st.nowMs)
	if err != nil {
		return err
	}
	switch r := reads[0]; {
	case r.state == limitOther || (r.state == limitLive && r.limit.key != st.Key):
		return failf("%s holds a sorted set that is not a syncguard concurrency limit or read-write lock of this key", display(st.LockKey))
	case r.state == limitLive:
		st.Limit = newLimitShow(r.limit, st.nowMs)
	case r.state == limitExpired:
		st.Expired = true
	}
	return nil
}

// nodeOf returns the server holding key.
func (s *session) nodeOf(ctx context.Context, key string) (*redis.Client, error) {
	if s.cluster == nil {
		return s.client.(*redis.Client), nil
	}
	n, err := s.cluster.MasterForKey(ctx, key)
	if err != nil {
		return nil, redisError(ctx, s.where, err)
	}
	return n, nil
}

// printRow prints one row of show: a name, then the formatted value.
type printRow func(name, format string, args ...any)

// print prints st as show does without --json, a row a line.
func (st *state) print(w io.Writer) {
	row := func(name, format string, args ...any) {
		fmt.Fprintf(w, "%-14s %s\n", name, fmt.Sprintf(format, args...))
	}
	row("key", "%s", display(st.Key))
	if st.Request != nil {
		st.Request.print(row)
	}
	row("lock key", "%s", display(st.LockKey))
	st.printState(row)
	st.printCounter(row)
	st.printDone(row)
	st.printRecord(row)
	row("waiters", "%d", st.Waiters)
	if st.Schedule != nil {
		st.Schedule.print(row)
	}
}

// printState prints the key's state: an election's term, a lock, a
// limit's slots, or free.
func (st *state) printState(row printRow) {
	switch {
	case st.Locked && st.Lock.Election != nil:
		l := st.Lock
		row("state", "election: a leader holds the term")
		row("leader", "%s", display(l.Election.Leader))
		row("term fence", "%s", l.Fence)
		row("time left", "%s (the term ends %s unless the leader extends it)", duration(ms(l.TTLMs)), timestamp(l.ExpiresAt))
		row("term began", "%s (%s ago)", timestamp(l.AcquiredAt), duration(ms(l.AgeMs)))
		row("holder", "%s (hash of its lock id)", l.Holder)
	case st.Locked:
		l := st.Lock
		row("state", "locked")
		row("fence", "%s", l.Fence)
		row("holder", "%s (hash of its lock id)", l.Holder)
		row("acquired", "%s (%s ago)", timestamp(l.AcquiredAt), duration(ms(l.AgeMs)))
		row("expires", "%s (in %s)", timestamp(l.ExpiresAt), duration(ms(l.TTLMs)))
	case st.Limit != nil && st.Limit.ReadWrite:
		row("state", "read-write lock: %s", st.Limit.rwState())
		for _, h := range st.Limit.Holders {
			role := "reader"
			if h.Mode == "write" {
				role = "writer"
			}
			row(role, "fence %s  holder %s  acquired %s (%s ago)  expires %s (in %s)", h.Fence, h.Holder,
				timestamp(h.AcquiredAt), duration(ms(h.AgeMs)), timestamp(h.ExpiresAt), duration(ms(h.TTLMs)))
		}
	case st.Limit != nil:
		row("state", "limit: %d of %d slots held (n of the latest grant)", len(st.Limit.Holders), st.Limit.N)
		for _, h := range st.Limit.Holders {
			row("slot", "fence %s  holder %s  acquired %s (%s ago)  expires %s (in %s)", h.Fence, h.Holder,
				timestamp(h.AcquiredAt), duration(ms(h.AgeMs)), timestamp(h.ExpiresAt), duration(ms(h.TTLMs)))
		}
	case st.Expired:
		row("state", "free (expired lock data or slots not yet removed)")
	case st.neverLocked():
		row("state", "free (never locked: no lock, fence counter, marker, record or waiter for this key)")
	default:
		row("state", "free")
	}
}

// printCounter prints the fence counter, or that it is missing.
func (st *state) printCounter(row printRow) {
	switch {
	case st.Counter != "" && st.Striped:
		row("fence counter", "%s = %s (a stripe's counter, shared by every key hashed to it: not this key's history)", display(st.FenceKey), st.Counter)
	case st.Counter != "":
		row("fence counter", "%s = %s", display(st.FenceKey), st.Counter)
	case st.Locked || st.Limit != nil:
		row("fence counter", "%s: MISSING while the key is locked (evicted, or lost in a restart): run syncguard doctor", display(st.FenceKey))
	default:
		row("fence counter", "%s: none yet", display(st.FenceKey))
	}
}

// printDone prints the done marker.
func (st *state) printDone(row printRow) {
	if st.Done == nil {
		row("done marker", "none")
	} else if f, err := wire.DecodeDone(*st.Done); err == nil {
		row("done marker", "%s: done by fence %s, for %s more", display(st.DoneKey), f, duration(ms(st.DoneTTLMs)))
	} else {
		// Not a fence: a record stored there by a version that kept records
		// at the done marker's key. It still counts as done; replay no
		// longer reads it.
		row("done marker", "%s: not a fence (%d bytes, for %s more; a record of an older version?): %s",
			display(st.DoneKey), len(*st.Done), duration(ms(st.DoneTTLMs)), preview(*st.Done))
	}
}

// printRecord prints the stored record and, when it reads it, its response.
func (st *state) printRecord(row printRow) {
	switch r := st.Response; {
	case !st.HasRecord:
		row("record", "%s: none", display(st.RecordKey))
	case st.Tick != nil:
		st.Tick.print(row, st.recordHead(), st.nowMs)
	case st.Run != nil:
		st.Run.print(row, st.recordHead(), st.nowMs)
	case r == nil:
		row("record", "%s: %d bytes, for %s more, not a replay record this version reads: %s",
			display(st.RecordKey), st.RecordBytes, duration(ms(st.RecordTTLMs)), preview(*st.Record))
	case r.Completed:
		row("record", "%s: %d bytes, for %s more: status %d, completed by fence %s (response too large to store; retries get 409)",
			display(st.RecordKey), st.RecordBytes, duration(ms(st.RecordTTLMs)), r.Status, r.Fence)
	default:
		row("record", "%s: %d bytes, for %s more: status %d, stored by fence %s", display(st.RecordKey), st.RecordBytes,
			duration(ms(st.RecordTTLMs)), r.Status, r.Fence)
		r.print(row)
	}
}

// neverLocked reports whether the key was never locked: no lock, no fence
// counter (a per-key counter is never deleted; with stripes, not even a
// stripe's), no marker, record or waiter. With a stripe's counter it
// cannot tell.
func (st *state) neverLocked() bool {
	return !st.Locked && st.Limit == nil && !st.Expired && st.Counter == "" &&
		st.Done == nil && !st.HasRecord && st.Waiters == 0
}

// age is how long before nowMs (the server's TIME, read with the data) a
// holder was granted at acquiredAtMs; never negative: a grant written by
// another server's clock (a failed-over master, a cluster node) can be a
// little ahead of the one read.
func age(nowMs, acquiredAtMs int64) int64 { return max(nowMs-acquiredAtMs, 0) }

// preview quotes the start of a stored record.
func preview(v string) string {
	const n = 60
	if len(v) <= n {
		return strconv.Quote(v)
	}
	return strconv.Quote(strings.ToValidUTF8(v[:n], "")) + "..."
}

// rwState is a read-write lock's state line: "held by a writer" or
// "held by 3 readers".
func (l *limitShow) rwState() string {
	if l.rwWriter() {
		return "held by a writer"
	}
	return "held by " + count(int64(len(l.Holders)), "reader")
}

// rwWriter reports whether a writer holds the read-write lock.
func (l *limitShow) rwWriter() bool { return len(l.Holders) == 1 && l.Holders[0].Mode == "write" }

// modeName is the name of a read-write lock holder's mode ('r', 'w'), ""
// for a slot of a limit.
func modeName(m byte) string {
	switch m {
	case 'r':
		return "read"
	case 'w':
		return "write"
	}
	return ""
}
