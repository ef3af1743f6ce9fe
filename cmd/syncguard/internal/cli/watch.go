package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
)

var watchCommand = &command{
	name:    "watch",
	args:    "[--match GLOB] [--interval D] [--count N] [--top N]",
	summary: "a line a second: locks, limits, acquisitions and releases per second, waiters, busiest keys",
	detail: "Samples the locks with SCAN every interval and compares each key's fence with the previous\n" +
		"sample, so the application needs no change. With a fence counter per key the fence difference\n" +
		"also counts the grants that came and went between two samples; an expiry counts as a release.\n" +
		"Waiters are those queued in Redis (<prefix>:queue:<lock key>). Concurrency limits (lock.WithLimit)\n" +
		"count the slots whose fences appeared or vanished between samples (a slot taken and freed\n" +
		"between two samples is not seen) and add \"limits L (S slots)\" to the line when there are any.\n" +
		"Ends on Ctrl-C, SIGTERM or --count.",
	flags: func(fs *flag.FlagSet, o *options) {
		fs.StringVar(&o.match, "match", "*", "only keys matching this Redis glob")
		fs.DurationVar(&o.interval, "interval", time.Second, "time between samples")
		fs.IntVar(&o.count, "count", 0, "stop after this many lines (0: until interrupted)")
		fs.IntVar(&o.top, "top", 3, "how many of the busiest keys to name")
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
// samples and are not now.
type sample struct {
	nowMs   int64
	locks   map[string]held
	limits  map[string]heldLimit // by lock key
	gone    map[string]gone      // by lock key, with a fence counter per key
	waiters int64
}

// gone is a key seen locked before and free now.
type gone struct {
	key     string
	counter lock.Fence // its fence counter
	age     int        // samples since it was last seen locked, minus one
}

// goneSamples is how many samples watch keeps reading the counter of a key
// it saw locked, so that the grants of a key that is free at every sample
// (held briefly, often) still count.
const goneSamples = 30

// held is a live lock in a sample.
type held struct {
	key     string
	fence   lock.Fence
	waiters int64
}

// activity is what changed on one key between two samples.
type activity struct {
	key      string
	acquired int64
	waiters  int64
}

func runWatch(ctx context.Context, s *session, o *options, args []string) error {
	w := bufio.NewWriter(s.env.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, "watching %s every %v: acquisitions and releases counted by comparing fences between samples (an expiry counts as a release)\n",
		s.names.scanPattern(o.match), o.interval)
	if err := w.Flush(); err != nil {
		return err
	}
	perKey := o.stripes == 0
	prev, err := s.sample(ctx, o.match, sample{}, perKey)
	if err != nil {
		return quietIfDone(ctx, err)
	}
	ticker := time.NewTicker(o.interval)
	defer ticker.Stop()
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
		fmt.Fprintln(w, watchLine(prev, cur, perKey, o.top))
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

// sample scans the live locks and counts their waiters (the sorted set
// "<prefix>:queue:<lock key>" where the backend queues waiters in Redis).
// With a fence counter per key it also reads the counters of the keys
// locked in prev and free now, so the grants that came and went on them
// since prev are counted too.
func (s *session) sample(ctx context.Context, glob string, prev sample, perKey bool) (sample, error) {
	cur := sample{locks: map[string]held{}, limits: map[string]heldLimit{}, gone: map[string]gone{}}
	var t tally
	err := s.scanLocks(ctx, glob, &t, func(p page) error {
		cur.nowMs = max(cur.nowMs, p.nowMs)
		pipe := p.node.Pipeline()
		cards := make([]*redis.IntCmd, len(p.locks))
		for i, l := range p.locks {
			cards[i] = pipe.ZCard(ctx, s.names.queueKey(l.redisKey))
		}
		if len(cards) > 0 {
			_, _ = pipe.Exec(ctx) // no queue, or not a sorted set: 0 waiters
		}
		for i, l := range p.locks {
			n := cards[i].Val()
			cur.waiters += n
			cur.locks[l.redisKey] = held{key: l.data.key, fence: l.data.fence, waiters: n}
		}
		for _, l := range p.limits {
			cur.waiters += l.data.waiters
			cur.limits[l.redisKey] = newHeldLimit(l.data)
		}
		return nil
	})
	if err != nil {
		return sample{}, err
	}
	if perKey {
		if err := s.readGone(ctx, prev, &cur); err != nil {
			return sample{}, err
		}
	}
	if cur.nowMs == 0 { // no keys: the time from the first node
		nodes, err := s.nodes(ctx)
		if err != nil {
			return sample{}, err
		}
		now, err := nodes[0].Time(ctx).Result()
		if err != nil {
			return sample{}, redisError(ctx, nodes[0].Options().Addr, err)
		}
		cur.nowMs = now.UnixMilli()
	}
	return cur, nil
}

// readGone reads into cur.gone the fence counters of the keys locked in
// prev, or gone in prev for less than goneSamples samples, that are not
// locked in cur, in one pipeline.
func (s *session) readGone(ctx context.Context, prev sample, cur *sample) error {
	pipe := s.client.Pipeline()
	reads := map[string]*redis.StringCmd{}
	next := map[string]gone{}
	read := func(lockKey, key string, age int) {
		if _, ok := cur.locks[lockKey]; ok || age >= goneSamples {
			return
		}
		keys, err := s.backend.StorageKeys(key)
		if err != nil || keys.Lock != lockKey {
			return // not named as this layout names it: its release counts once
		}
		reads[lockKey] = pipe.Get(ctx, keys.Fence)
		next[lockKey] = gone{key: key, age: age}
	}
	for k, p := range prev.locks {
		read(k, p.key, 0)
	}
	for k, g := range prev.gone {
		read(k, g.key, g.age+1)
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
		if g.counter, err = lock.FormatFence(n); err == nil {
			cur.gone[k] = g
		}
	}
	return nil
}

// compare counts the grants and releases between two samples: a lock that
// appeared was acquired, one that vanished was released (or expired), one
// whose fence changed was released and acquired again. With a fence
// counter per key the fences count the grants that came and went between
// the samples too: on a key held in both, by the difference of the fences;
// on a key free in one or both, by its counter (sample.gone) against the
// fence or counter of the other. With striped counters each change counts
// once.
func compare(prev, cur sample, perKey bool) (acquired, released int64, busy []activity) {
	grants := func(to, from lock.Fence) int64 { // grants after the one of fence from, up to to
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
	add := func(key string, n, waiters int64) {
		if n > 0 || waiters > 0 {
			busy = append(busy, activity{key: key, acquired: n, waiters: waiters})
		}
	}
	for k, c := range cur.locks {
		var n int64
		if p, was := prev.locks[k]; was {
			if p.fence != c.fence {
				n = grants(c.fence, p.fence)
				released += n // the holder of p.fence and those between
			}
		} else if g, ok := prev.gone[k]; ok && perKey {
			n = grants(c.fence, g.counter)
			released += n - 1 // those between; the holder of g's fence counted before
		} else {
			n = 1
		}
		acquired += n
		add(c.key, n, c.waiters)
	}
	for k, g := range cur.gone {
		var n int64
		if p, was := prev.locks[k]; was {
			released++ // the holder of p.fence
			if g.counter != p.fence {
				n = grants(g.counter, p.fence)
				released += n
			}
		} else if pg, ok := prev.gone[k]; ok && pg.counter != g.counter {
			n = grants(g.counter, pg.counter)
			released += n
		}
		acquired += n
		add(g.key, n, 0)
	}
	for k := range prev.locks {
		if _, ok := cur.locks[k]; !ok {
			if _, ok := cur.gone[k]; !ok {
				released++ // vanished, counter unknown (striped, or not read)
			}
		}
	}
	la, lr, lb := compareLimits(prev, cur)
	acquired, released, busy = acquired+la, released+lr, append(busy, lb...)
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
	return acquired, released, busy
}

// watchLine is one line of watch: the server's time, then what changed
// since the previous sample.
func watchLine(prev, cur sample, perKey bool, top int) string {
	acquired, released, busy := compare(prev, cur, perKey)
	secs := float64(cur.nowMs-prev.nowMs) / 1000
	if secs <= 0 {
		secs = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  locks %d", msTime(cur.nowMs).Format("15:04:05"), len(cur.locks))
	if len(cur.limits) > 0 || len(prev.limits) > 0 {
		fmt.Fprintf(&b, "  limits %d (%s)", len(cur.limits), count(int64(cur.slotCount()), "slot"))
	}
	fmt.Fprintf(&b, "  acquired/s %.1f  released/s %.1f  waiters %d  busiest:",
		float64(acquired)/secs, float64(released)/secs, cur.waiters)
	if len(busy) == 0 || top == 0 {
		b.WriteString(" -")
	}
	for i, a := range busy[:min(top, len(busy))] {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %s %.1f/s", display(a.key), float64(a.acquired)/secs)
		if a.waiters > 0 {
			fmt.Fprintf(&b, " (%d waiting)", a.waiters)
		}
	}
	return b.String()
}
