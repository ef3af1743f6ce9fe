package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

var lsCommand = &command{
	name:    "ls",
	args:    "[--match GLOB] [--json]",
	summary: "the live locks and limits: fence, age, time left, holder (hash of its lock id), key; totals",
	detail: "Streams the locks as it scans (SCAN, on every master of a cluster), so its memory stays small\n" +
		"on millions of keys. --match filters by the key as the application names it, read from the\n" +
		"lock data (so keys longer than about 970 bytes, stored under a hash, match too; ? is one\n" +
		"character). HOLDER is lockdriver.HashKey of the lock id.\n" +
		"A concurrency limit (lock.WithLimit) is one line: the fence and age of its latest grant, the\n" +
		"time until its first slot expires, and in HOLDER \"<live slots>/<n> slots\" (n of the latest\n" +
		"grant) and its waiters; syncguard show KEY lists its slots.\n" +
		"A read-write lock (lock/rwlock) is one line too: the fence and age of its latest grant, the time\n" +
		"until its first holder expires, and in HOLDER \"writer <hash>\" or \"<n> readers\" and its waiters.\n" +
		"A leader election's key (lock/election) is the lock of its current term: HOLDER is\n" +
		"\"election: <leader's identity>\", the fence is the term's, TTL the time left in the term.",
	flags: func(fs *flag.FlagSet, o *options) {
		fs.StringVar(&o.match, "match", "*", "only keys matching this Redis glob (* ? [abc] \\x)")
		fs.BoolVar(&o.json, "json", false, "one JSON object per line: a lock each, then {\"totals\": ...}")
	},
	check: noArgs("ls", "; filter with --match GLOB"),
	run:   runLs,
}

// lsRow is one lock or limit of ls --json. For a limit, Fence, AcquiredAt
// and AgeMs are its latest grant's, ExpiresAt and TTLMs its first slot to
// expire's, and Holder is empty.
type lsRow struct {
	Key        string        `json:"key"`
	RedisKey   string        `json:"redisKey"`
	Fence      lock.Fence    `json:"fence"`
	Holder     string        `json:"holder,omitempty"`
	AcquiredAt time.Time     `json:"acquiredAt"`
	ExpiresAt  time.Time     `json:"expiresAt"`
	AgeMs      int64         `json:"ageMs"`
	TTLMs      int64         `json:"ttlMs"`
	Limit      *limitSummary `json:"limit,omitempty"` // only for a limit
	// ReadWrite is set for a read-write lock (lock/rwlock); Holder is
	// then its writer's, if a writer holds it.
	ReadWrite *rwSummary `json:"readWrite,omitempty"`
	// Election is set for a term of a leader election (lock/election).
	Election *electionSummary `json:"election,omitempty"`
	Node     string           `json:"node,omitempty"`
}

// electionSummary is the election part of a lock's row: its lock data
// names the leader (the "owner" member a term carries).
type electionSummary struct {
	Leader string `json:"leader"` // the identity the leader campaigned with
}

// lockRow is the row of a live lock read at nowMs.
func lockRow(redisKey string, d wire.LockData, nowMs int64) lsRow {
	row := lsRow{Key: d.Key, RedisKey: redisKey, Fence: d.Fence, Holder: holderOf(d.LockID),
		AcquiredAt: msTime(d.AcquiredAtMs), ExpiresAt: msTime(d.ExpiresAtMs),
		AgeMs: age(nowMs, d.AcquiredAtMs), TTLMs: d.ExpiresAtMs - nowMs}
	if d.Election() {
		row.Election = &electionSummary{Leader: d.Owner}
	}
	return row
}

// holderColumn is a lock's HOLDER column: the hash of its lock id, or for
// an election's term "election: <leader>".
func (r lsRow) holderColumn() string {
	if r.Election != nil {
		return "election: " + display(r.Election.Leader)
	}
	return r.Holder
}

// limitSummary is the limit part of an ls --json row.
type limitSummary struct {
	N       int   `json:"n"`       // the limit of the latest grant
	Holders int   `json:"holders"` // live slots
	Waiters int64 `json:"waiters"` // entries in the key's queue
}

// rwSummary is the read-write part of an ls --json row.
type rwSummary struct {
	Readers int   `json:"readers"` // live readers
	Writer  bool  `json:"writer"`  // a writer holds the key
	Waiters int64 `json:"waiters"` // entries in the key's queue
}

// limitRow is the ls row of a limit, or of a read-write lock.
func limitRow(redisKey string, l limitData, nowMs int64) lsRow {
	last := l.latest()
	first := l.slots[0] // earliest expiry first
	row := lsRow{Key: l.key, RedisKey: redisKey, Fence: last.fence,
		AcquiredAt: msTime(last.acquiredAtMs), ExpiresAt: msTime(first.expiresAtMs),
		AgeMs: age(nowMs, last.acquiredAtMs), TTLMs: first.expiresAtMs - nowMs}
	if !l.rw {
		row.Limit = &limitSummary{N: last.n, Holders: len(l.slots), Waiters: l.waiters}
		return row
	}
	row.ReadWrite = &rwSummary{Waiters: l.waiters}
	for _, sl := range l.slots {
		if sl.mode == 'w' {
			row.ReadWrite.Writer, row.Holder = true, sl.holder()
		} else {
			row.ReadWrite.Readers++
		}
	}
	return row
}

// limitColumn is the HOLDER column of a limit or a read-write lock:
// "2/3 slots, 1 waiting", "writer <hash>", "3 readers, 1 waiting".
func (r lsRow) limitColumn() string {
	if r.Limit != nil {
		return r.Limit.slotsColumn()
	}
	s := "writer " + r.Holder
	if !r.ReadWrite.Writer {
		s = count(int64(r.ReadWrite.Readers), "reader")
	}
	if r.ReadWrite.Waiters > 0 {
		s += fmt.Sprintf(", %d waiting", r.ReadWrite.Waiters)
	}
	return s
}

// slotsColumn is a limit's HOLDER column: "2/3 slots, 1 waiting".
func (l *limitSummary) slotsColumn() string {
	s := fmt.Sprintf("%d/%d slots", l.Holders, l.N)
	if l.Waiters > 0 {
		s += fmt.Sprintf(", %d waiting", l.Waiters)
	}
	return s
}

const lsHeader = "FENCE            AGE       TTL       HOLDER                    KEY"

// runLs streams the live locks, a page at a time: its memory does not grow
// with the number of keys.
func runLs(ctx context.Context, s *session, o *options, args []string) error {
	w := bufio.NewWriter(s.env.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	if !o.json {
		fmt.Fprintln(w, lsHeader)
	}
	var t tally
	err := s.scanLocks(ctx, o.match, &t, func(p page) error {
		for _, l := range p.locks {
			row := lockRow(l.redisKey, l.data, p.nowMs)
			if o.json {
				if s.cluster != nil {
					row.Node = p.node.Options().Addr
				}
				if err := enc.Encode(row); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(w, "%-15s  %-8s  %-8s  %-24s  %s\n", row.Fence, duration(ms(row.AgeMs)), duration(ms(row.TTLMs)),
				row.holderColumn(), display(row.Key))
		}
		for _, l := range p.limits {
			row := limitRow(l.redisKey, l.data, p.nowMs)
			if o.json {
				if s.cluster != nil {
					row.Node = p.node.Options().Addr
				}
				if err := enc.Encode(row); err != nil {
					return err
				}
				continue
			}
			fmt.Fprintf(w, "%-15s  %-8s  %-8s  %-24s  %s\n", row.Fence, duration(ms(row.AgeMs)), duration(ms(row.TTLMs)),
				row.limitColumn(), display(row.Key))
		}
		return w.Flush() // stream: a page's lines go out before the next page is read
	})
	if err != nil {
		return err
	}
	if o.json {
		return enc.Encode(struct {
			Totals tally `json:"totals"`
		}{t})
	}
	fmt.Fprintln(w, totals(t, s.names.scanPattern(), o.match))
	return nil
}

// totals is ls's last line.
func totals(t tally, pattern, glob string) string {
	s := count(t.Locks, "lock")
	if t.Elections > 0 {
		s += fmt.Sprintf(" (%s)", count(t.Elections, "election"))
	}
	if t.Limits > 0 {
		s += fmt.Sprintf(", %s (%s)", count(t.Limits, "limit"), count(t.Slots, "slot"))
	}
	if t.ReadWrite > 0 {
		s += fmt.Sprintf(", %s (%s)", count(t.ReadWrite, "read-write lock"), count(t.Holders, "holder"))
	}
	if glob != "*" {
		s += " with keys matching " + glob
	}
	s += fmt.Sprintf(" (scanned %s matching %s: ", count(t.Scanned, "key"), pattern)
	if glob != "*" {
		s += fmt.Sprintf("%d locks or limits not matching, ", t.NotMatching)
	}
	s += fmt.Sprintf("%s, %s, %s, %s, %s",
		count(t.Index, "index key"), count(t.Fence, "fence counter"), count(t.Done, "done marker"),
		count(t.Records, "record"), count(t.Queue, "waiter queue"))
	if t.Config > 0 {
		s += ", the configuration record"
	}
	if t.Expired > 0 {
		s += ", " + count(t.Expired, "expired lock") + " or limit"
		if t.Expired > 1 {
			s += "s"
		}
	}
	if t.Other > 0 {
		s += fmt.Sprintf(", %d not syncguard locks", t.Other)
	}
	return s + ")"
}

// count is "1 lock", "2 locks".
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
