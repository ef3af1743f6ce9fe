package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/maphash"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
)

var watchCommand = &command{
	name:    "watch",
	args:    "[--match GLOB] [--interval D] [--count N] [--top N] [--json]",
	summary: "a line a second: locks, limits, read-write locks, acquisitions and releases per second, waiters, busiest keys",
	detail: "Samples the prefix's keys with SCAN every interval, so the application needs no change.\n" +
		"Every grant writes an index key named after its new lock id (<prefix>:id:<lock id>), which stays\n" +
		"until the lease ends and then, as a release tombstone, for the resend window (5 s at least): an\n" +
		"index key that the previous sample did not see is a grant, whatever the fence counters (per key\n" +
		"or striped). Only a lease that expired without release sooner than --interval after its grant\n" +
		"(or a TypeScript client's, released within --interval) can be missed; with a counter per key the\n" +
		"fences count those of the keys seen recently too. Releases are the grants less the change in held\n" +
		"locks and slots (an expiry counts as a release). The busiest keys: per key, the grants its fences\n" +
		"show (all of them with a counter per key, one per change with striped counters) or the new lock\n" +
		"ids that named it, whichever is more; the grants counted on no key end the line (\"on keys no\n" +
		"sample saw held\"). With --match, only grants whose key is known to match count: by the lock\n" +
		"data when a sample finds the lease held, or by the key's fences. Waiters are those queued in\n" +
		"Redis (<prefix>:queue:<lock key>). Concurrency limits (lock.WithLimit) add \"limits L (S slots)\"\n" +
		"to the line when there are any. Leader elections (lock/election) add \"elections E, new terms T\n" +
		"(N since start)\": every new fence on a key a sample found held by an election's term is a term\n" +
		"(a term that began and ended between two samples on a key no sample saw held as an election's is\n" +
		"not). Read-write locks (lock/rwlock) add \"read-write K (R readers, W writers; readers +J -L,\n" +
		"writers granted G)\": the locks held and their holders now, the readers that joined and left and\n" +
		"the writers granted since the previous sample (by the holders' fences and new lock ids; a writer\n" +
		"granted and released between two samples counts among the acquisitions only).\n" +
		"--json prints each line as a JSON object.\n" +
		"Ends on Ctrl-C, SIGTERM or --count.",
	flags: func(fs *flag.FlagSet, o *options) {
		fs.StringVar(&o.match, "match", "*", "only keys matching this Redis glob")
		fs.DurationVar(&o.interval, "interval", time.Second, "time between samples")
		fs.IntVar(&o.count, "count", 0, "stop after this many lines (0: until interrupted)")
		fs.IntVar(&o.top, "top", 3, "how many of the busiest keys to name")
		fs.BoolVar(&o.json, "json", false, "one JSON object per sample (no header line)")
	},
	check: func(o *options, args []string) error {
		if o.interval <= 0 || o.count < 0 || o.top < 0 {
			return usageErrorf("watch needs --interval > 0, --count >= 0 and --top >= 0")
		}
		return noArgs("watch", "; filter with --match GLOB")(o, args)
	},
	run: runWatch,
}

// sample is what one scan saw: the live locks by lock key, and the fence
// counters of the keys that were locked in one of the last goneSamples
// samples and are not now; and the index keys, by which the next sample
// counts the grants.
type sample struct {
	nowMs   int64
	locks   map[string]held
	limits  map[string]heldLimit // by lock key
	gone    map[string]gone      // by lock key, with a fence counter per key
	waiters int64
	// ids holds a fingerprint of the name of every index key of the
	// prefix (every lease's, whatever --match): a lock id appears once, at
	// its grant, and its index key stays until the lease ends and, as a
	// release tombstone, for the resend window after.
	ids map[uint64]struct{}
	// grants counts the index keys new since the previous sample that are
	// grants (idsCounted: there was a previous sample to compare with): by
	// lock key, those whose lease a sample found (byLock); the rest,
	// granted and ended between the samples, in unattributed (counted in
	// grants only when --match is "*").
	grants       int64
	byLock       map[string]idGrants
	unattributed int64
	idsCounted   bool
	// rwNew counts the new index keys of read-write locks' readers [0]
	// and writers [1] that were still held when read.
	rwNew [2]int64
}

// idGrants is the new lock ids of one lock key in a sample.
type idGrants struct {
	key string // the user key, "" when unknown
	n   int64
}

// gone is a key seen locked before and free now.
type gone struct {
	key      string
	counter  lock.Fence // its fence counter
	age      int        // samples since it was last seen locked, minus one
	election bool       // it was last seen held by an election's term
}

// goneSamples is how many samples watch keeps reading the counter of a key
// it saw locked, so that the grants of a key that is free at every sample
// (held briefly, often) still count.
const goneSamples = 30

// held is a live lock in a sample.
type held struct {
	key      string
	fence    lock.Fence
	waiters  int64
	election bool // a term of a leader election (its lock data names the leader)
}

// activity is what changed on one key between two samples.
type activity struct {
	key      string
	acquired int64
	waiters  int64
	election bool // a leader election's key: each grant is a new term
}

// watchRow is one line of watch --json.
type watchRow struct {
	Time           time.Time `json:"time"`
	IntervalMs     int64     `json:"intervalMs"`
	Locks          int       `json:"locks"`
	Limits         int       `json:"limits"`
	Slots          int       `json:"slots"`
	Acquired       int64     `json:"acquired"`
	Released       int64     `json:"released"`
	AcquiredPerSec float64   `json:"acquiredPerSec"`
	ReleasedPerSec float64   `json:"releasedPerSec"`
	Waiters        int64     `json:"waiters"`
	Busiest        []busyRow `json:"busiest"`
	// Unattributed counts the grants of Acquired counted on no key:
	// leases granted and ended between the samples on keys whose fences do
	// not tell (striped counters, or keys no recent sample saw held, such
	// as a new Idempotency-Key per request).
	Unattributed       int64   `json:"unattributed"`
	UnattributedPerSec float64 `json:"unattributedPerSec"`
	// Elections is the number of leader elections (lock/election) whose
	// term the sample found held; Terms the new terms since the previous
	// sample (the grants counted on keys seen held by a term), and
	// TermsTotal those since watch started.
	Elections  int   `json:"elections"`
	Terms      int64 `json:"terms"`
	TermsTotal int64 `json:"termsTotal"`
	// ReadWrite is the number of read-write locks (lock/rwlock) the
	// sample found held, by Readers readers and Writers writers in all
	// (Limits and Slots leave them out). Since the previous sample,
	// ReadersJoined readers were granted and ReadersLeft released (or
	// expired), and WritersGranted writers were granted.
	ReadWrite      int   `json:"readWrite"`
	Readers        int   `json:"readers"`
	Writers        int   `json:"writers"`
	ReadersJoined  int64 `json:"readersJoined"`
	ReadersLeft    int64 `json:"readersLeft"`
	WritersGranted int64 `json:"writersGranted"`
}

// busyRow is one of the busiest keys of a watchRow.
type busyRow struct {
	Key            string  `json:"key"`
	Acquired       int64   `json:"acquired"`
	AcquiredPerSec float64 `json:"acquiredPerSec"`
	Waiters        int64   `json:"waiters"`
}

func runWatch(ctx context.Context, s *session, o *options, args []string) error {
	w := bufio.NewWriter(s.env.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	if !o.json {
		what := ""
		if o.match != "*" {
			what = " (keys matching " + o.match + ")"
		}
		fmt.Fprintf(w, "watching %s%s every %v: acquisitions counted by the new lock ids and the fences between samples, releases by the leases that ended (an expiry counts as a release)\n",
			s.names.scanPattern(), what, o.interval)
		if err := w.Flush(); err != nil {
			return err
		}
	}
	perKey := s.backend.Config().FenceStripes == 0
	prev, err := s.sample(ctx, o.match, sample{}, perKey)
	if err != nil {
		return quietIfDone(ctx, err)
	}
	ticker := time.NewTicker(o.interval)
	defer ticker.Stop()
	var terms int64 // since the first sample
	for n := 0; o.count == 0 || n < o.count; n++ {
		select {
		case <-ctx.Done():
			return nil // SIGINT or SIGTERM: the normal end of watch
		case <-ticker.C:
		}
		cur, err := s.sample(ctx, o.match, prev, perKey)
		if err != nil {
			return quietIfDone(ctx, err)
		}
		row := newWatchRow(prev, cur, perKey, o.top)
		terms += row.Terms
		row.TermsTotal = terms
		if o.json {
			if err := enc.Encode(row); err != nil {
				return err
			}
		} else {
			fmt.Fprintln(w, row.line())
		}
		if err := w.Flush(); err != nil {
			return err
		}
		prev = cur
	}
	return nil
}

func quietIfDone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// sample scans the prefix's keys: the live locks and limits whose key
// matches glob, with their waiters (the sorted set "<prefix>:queue:<lock
// key>" where the backend queues waiters in Redis), and the index keys,
// reading those new since prev to count the grants. With a fence counter
// per key it also reads the counters of the keys locked in prev and free
// now, so the grants that came and went on them since prev are counted
// too.
func (s *session) sample(ctx context.Context, glob string, prev sample, perKey bool) (sample, error) {
	cur := sample{locks: map[string]held{}, limits: map[string]heldLimit{}, gone: map[string]gone{},
		ids: make(map[uint64]struct{}, len(prev.ids)), byLock: map[string]idGrants{}, idsCounted: prev.ids != nil}
	var t tally
	err := s.scanLocks(ctx, glob, &t, func(p page) error {
		return s.addPage(ctx, prev, &cur, p)
	})
	if err != nil {
		return sample{}, err
	}
	cur.attribute(prev, s.names, glob)
	if perKey {
		if err := s.readGone(ctx, prev, &cur); err != nil {
			return sample{}, err
		}
	}
	if cur.nowMs == 0 { // no keys: the time from the first node
		if cur.nowMs, err = s.serverTime(ctx); err != nil {
			return sample{}, err
		}
	}
	return cur, nil
}

// addPage adds to cur the locks and limits of a page with their waiters,
// and the grants that its index keys unseen in prev tell, reading both in
// one pipeline.
func (s *session) addPage(ctx context.Context, prev sample, cur *sample, p page) error {
	cur.nowMs = max(cur.nowMs, p.nowMs)
	pipe := p.node.Pipeline()
	cards := make([]*redis.IntCmd, len(p.locks))
	for i, l := range p.locks {
		cards[i] = pipe.ZCard(ctx, s.names.queueKey(l.redisKey))
	}
	// The index keys: a name the previous sample did not see is a
	// lock id granted since; its value tells which lock (or that the
	// lease ended already, a tombstone).
	var fresh []*redis.StringCmd
	for _, k := range p.index {
		fp := maphash.String(s.seed, k)
		cur.ids[fp] = struct{}{}
		if _, seen := prev.ids[fp]; !seen && cur.idsCounted {
			fresh = append(fresh, pipe.Get(ctx, k))
		}
	}
	if len(cards) > 0 || len(fresh) > 0 {
		_, err := pipe.Exec(ctx) // no queue, or not a sorted set: 0 waiters
		if err != nil && !errors.Is(err, redis.Nil) && !isReply(err) {
			return redisError(ctx, p.node.Options().Addr, err)
		}
	}
	for i, l := range p.locks {
		n := cards[i].Val()
		cur.waiters += n
		cur.locks[l.redisKey] = held{key: l.data.Key, fence: l.data.Fence, waiters: n, election: l.data.Election()}
	}
	for _, l := range p.limits {
		cur.waiters += l.data.waiters
		cur.limits[l.redisKey] = newHeldLimit(l.data)
	}
	cur.countGrants(fresh, s.names)
	return nil
}

// countGrants counts the grants of the new index keys read by fresh: by
// lock key, or unattributed when the value names none.
func (cur *sample) countGrants(fresh []*redis.StringCmd, names namer) {
	for _, cmd := range fresh {
		v, err := cmd.Result()
		if err != nil {
			continue // gone since the SCAN (a lease that expired, most likely): not counted
		}
		cur.countRWGrant(v)
		lockKey, key, granted := names.indexValue(v)
		switch {
		case !granted:
		case lockKey == "":
			cur.unattributed++
		default:
			g := cur.byLock[lockKey]
			g.n++
			if key != "" {
				g.key = key
			}
			cur.byLock[lockKey] = g
		}
	}
}

// serverTime returns the first node's TIME in Unix milliseconds.
func (s *session) serverTime(ctx context.Context) (int64, error) {
	nodes, err := s.nodes(ctx)
	if err != nil {
		return 0, err
	}
	now, err := nodes[0].Time(ctx).Result()
	if err != nil {
		return 0, redisError(ctx, nodes[0].Options().Addr, err)
	}
	return now.UnixMilli(), nil
}

// attribute names the user key of every lock key whose new lock ids the
// sample counted (by its lock data in this sample or the last, else by its
// name), drops those that do not match glob, and sums the grants.
func (cur *sample) attribute(prev sample, names namer, glob string) {
	for lk, g := range cur.byLock {
		if g.key == "" {
			switch {
			case cur.locks[lk].key != "":
				g.key = cur.locks[lk].key
			case cur.limits[lk].key != "":
				g.key = cur.limits[lk].key
			case prev.locks[lk].key != "":
				g.key = prev.locks[lk].key
			default:
				if _, rest, ok := names.split(lk); ok && !hashedName(rest) {
					g.key = rest
				}
			}
		}
		if glob != "*" && (g.key == "" || !globMatch(glob, g.key)) {
			delete(cur.byLock, lk)
			continue
		}
		cur.byLock[lk] = g
		cur.grants += g.n
	}
	if glob == "*" {
		cur.grants += cur.unattributed
	}
}

// readGone reads into cur.gone the fence counters of the keys locked in
// prev, or gone in prev for less than goneSamples samples, that are not
// locked in cur, in one pipeline.
func (s *session) readGone(ctx context.Context, prev sample, cur *sample) error {
	pipe := s.client.Pipeline()
	reads := map[string]*redis.StringCmd{}
	next := map[string]gone{}
	read := func(lockKey, key string, age int, election bool) {
		if _, ok := cur.locks[lockKey]; ok || age >= goneSamples {
			return
		}
		keys, err := admin.StorageKeys(s.backend, key)
		if err != nil || keys.Lock != lockKey {
			return // not named as this layout names it: its release counts once
		}
		reads[lockKey] = pipe.Get(ctx, keys.Fence)
		next[lockKey] = gone{key: key, age: age, election: election}
	}
	for k, p := range prev.locks {
		read(k, p.key, 0, p.election)
	}
	for k, g := range prev.gone {
		read(k, g.key, g.age+1, g.election)
	}
	if len(reads) == 0 {
		return nil
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !isReply(err) {
		return redisError(ctx, s.where, err)
	}
	for k, cmd := range reads {
		n, err := strconv.ParseUint(cmd.Val(), 10, 64)
		if err != nil {
			continue
		}
		g := next[k]
		if g.counter, err = lockdriver.FormatFence(n); err == nil {
			cur.gone[k] = g
		}
	}
	return nil
}

// compare counts the grants and releases between two samples. Per key: a
// lock that appeared was acquired, one that vanished was released (or
// expired), one whose fence changed was released and acquired again; with
// a fence counter per key the fences count the grants that came and went
// between the samples too: on a key held in both, by the difference of
// the fences; on a key free in one or both, by its counter (sample.gone)
// against the fence or counter of the other. With striped counters each
// change counts once. The new lock ids of a key (sample.byLock) count
// when they are more. In all, the grants are the larger of the keys' sum
// and the new lock ids (sample.grants), which also count the leases
// granted and ended between the samples on any key; the releases are the
// grants less the change in held locks and slots.
func compare(prev, cur sample, perKey bool) (acquired, released int64, busy []activity) {
	acquired, released, busy, _ = compareAll(prev, cur, perKey)
	return acquired, released, busy
}

// compareAll is compare, which also returns the grants it counted on no
// key (acquired less the keys' sum): leases granted and ended between the
// samples on keys whose fences do not tell (striped counters, or keys no
// recent sample saw held).
func compareAll(prev, cur sample, perKey bool) (acquired, released int64, busy []activity, unattributed int64) {
	as := activities{prev: prev, cur: cur, per: map[string]*activity{}}
	as.addFences(perKey)
	for k, a := range limitActivity(prev, cur) {
		as.add(k, a.key, a.acquired, a.waiters)
	}
	for k, g := range cur.byLock {
		as.add(k, g.key, g.n, 0)
	}
	var perKeySum int64
	for _, a := range as.per {
		perKeySum += a.acquired
		if a.acquired > 0 || a.waiters > 0 {
			busy = append(busy, *a)
		}
	}
	acquired = perKeySum
	if cur.idsCounted {
		acquired = max(acquired, cur.grants)
	}
	unattributed = acquired - perKeySum
	held := func(s sample) int64 { return int64(len(s.locks) + s.slotCount()) }
	released = max(held(prev)+acquired-held(cur), 0)
	sortBusy(busy)
	return acquired, released, busy, unattributed
}

// activities gathers, by lock key, what changed between two samples.
type activities struct {
	prev, cur sample
	per       map[string]*activity
}

// add counts n grants and waiters on lockKey, keeping the larger count of
// the ways compare counts them.
func (as *activities) add(lockKey, key string, n, waiters int64) {
	a := as.per[lockKey]
	if a == nil {
		a = &activity{key: key}
		as.per[lockKey] = a
	}
	a.acquired = max(a.acquired, n)
	a.waiters = max(a.waiters, waiters)
	a.election = a.election || as.cur.locks[lockKey].election || as.prev.locks[lockKey].election ||
		as.cur.gone[lockKey].election
}

// addFences counts the grants that the fences of the locks and the fence
// counters of the keys gone free tell.
func (as *activities) addFences(perKey bool) {
	prev, cur := as.prev, as.cur
	for k, c := range cur.locks {
		var n int64
		if p, was := prev.locks[k]; was {
			if p.fence != c.fence {
				n = fenceGrants(c.fence, p.fence, perKey)
			}
		} else if g, ok := prev.gone[k]; ok && perKey {
			n = fenceGrants(c.fence, g.counter, perKey)
		} else {
			n = 1
		}
		as.add(k, c.key, n, c.waiters)
	}
	for k, g := range cur.gone {
		var n int64
		if p, was := prev.locks[k]; was {
			if g.counter != p.fence {
				n = fenceGrants(g.counter, p.fence, perKey)
			}
		} else if pg, ok := prev.gone[k]; ok && pg.counter != g.counter {
			n = fenceGrants(g.counter, pg.counter, perKey)
		}
		as.add(k, g.key, n, 0)
	}
}

// fenceGrants counts the grants after the one of fence from, up to to: their
// difference with a counter per key, else (or when they do not tell) one.
func fenceGrants(to, from lock.Fence, perKey bool) int64 {
	if !perKey {
		return 1
	}
	a, ok1 := to.Uint64()
	b, ok2 := from.Uint64()
	if !ok1 || !ok2 || a <= b {
		return 1
	}
	return int64(a - b)
}

// sortBusy sorts the busiest keys first: by grants, then waiters, then key.
func sortBusy(busy []activity) {
	sort.Slice(busy, func(i, j int) bool {
		a, b := busy[i], busy[j]
		if a.acquired != b.acquired {
			return a.acquired > b.acquired
		}
		if a.waiters != b.waiters {
			return a.waiters > b.waiters
		}
		return a.key < b.key
	})
}

// newWatchRow is what changed from prev to cur, with the top busiest keys.
func newWatchRow(prev, cur sample, perKey bool, top int) watchRow {
	acquired, released, busy, other := compareAll(prev, cur, perKey)
	secs := float64(cur.nowMs-prev.nowMs) / 1000
	if secs <= 0 {
		secs = 1
	}
	rw, ch := cur.rwCounts(), rwActivity(prev, cur)
	r := watchRow{Time: msTime(cur.nowMs), IntervalMs: cur.nowMs - prev.nowMs, Locks: len(cur.locks),
		Limits: len(cur.limits) - rw.locks, Slots: cur.slotCount() - rw.readers - rw.writers, Acquired: acquired, Released: released,
		AcquiredPerSec: float64(acquired) / secs, ReleasedPerSec: float64(released) / secs, Waiters: cur.waiters,
		Busiest: []busyRow{}, Unattributed: other, UnattributedPerSec: float64(other) / secs,
		ReadWrite: rw.locks, Readers: rw.readers, Writers: rw.writers,
		ReadersJoined: ch.joined, ReadersLeft: ch.left, WritersGranted: ch.writers}
	for _, a := range busy {
		if a.election {
			r.Terms += a.acquired
		}
	}
	for _, l := range cur.locks {
		if l.election {
			r.Elections++
		}
	}
	for _, a := range busy[:min(top, len(busy))] {
		r.Busiest = append(r.Busiest, busyRow{Key: a.key, Acquired: a.acquired, AcquiredPerSec: float64(a.acquired) / secs, Waiters: a.waiters})
	}
	return r
}

// line is watch's line of r: the server's time, then what changed since
// the previous sample.
func (r watchRow) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  locks %d", r.Time.Format("15:04:05"), r.Locks)
	if r.Limits > 0 || r.Slots > 0 {
		fmt.Fprintf(&b, "  limits %d (%s)", r.Limits, count(int64(r.Slots), "slot"))
	}
	b.WriteString(r.rwPart())
	fmt.Fprintf(&b, "  acquired/s %.1f  released/s %.1f  waiters %d  busiest:", r.AcquiredPerSec, r.ReleasedPerSec, r.Waiters)
	if len(r.Busiest) == 0 {
		b.WriteString(" -")
	}
	for i, a := range r.Busiest {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %.1f/s", display(a.Key), a.AcquiredPerSec)
		if a.Waiters > 0 {
			fmt.Fprintf(&b, " (%d waiting)", a.Waiters)
		}
	}
	if r.Unattributed > 0 {
		fmt.Fprintf(&b, "; %.1f/s on keys no sample saw held", r.UnattributedPerSec)
	}
	if r.Elections > 0 || r.TermsTotal > 0 {
		fmt.Fprintf(&b, "; elections %d, new terms %d (%d since start)", r.Elections, r.Terms, r.TermsTotal)
	}
	return b.String()
}
