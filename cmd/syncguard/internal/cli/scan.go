package cli

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
)

// scanCount is the COUNT hint of every SCAN: about the number of keys a
// page holds, and so what a scan holds in memory at once.
const scanCount = 1000

// nodes returns the servers that hold keys: the one server, or every
// master of the cluster, in address order.
func (s *session) nodes(ctx context.Context) ([]*redis.Client, error) {
	if s.cluster == nil {
		return []*redis.Client{s.client.(*redis.Client)}, nil
	}
	var (
		mu    sync.Mutex
		nodes []*redis.Client
	)
	// ForEachMaster may first read the cluster's slots, asking one node
	// after another: --timeout bounds them together, as one reply.
	mctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	err := s.cluster.ForEachMaster(mctx, func(ctx context.Context, n *redis.Client) error {
		mu.Lock()
		nodes = append(nodes, n)
		mu.Unlock()
		return nil
	})
	switch {
	case err != nil && ctx.Err() == nil && mctx.Err() != nil:
		return nil, stalled(s.where, s.timeout)
	case err != nil:
		return nil, redisError(ctx, s.where, err)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Options().Addr < nodes[j].Options().Addr })
	return nodes, nil
}

// scanKeys calls fn with each page of the keys matching pattern on node
// (SCAN, never KEYS). A key may come twice if the server rehashes meanwhile.
func scanKeys(ctx context.Context, node *redis.Client, pattern string, fn func(keys []string) error) error {
	var cursor uint64
	for {
		keys, next, err := node.Scan(ctx, cursor, pattern, scanCount).Result()
		if err != nil {
			return redisError(ctx, node.Options().Addr, err)
		}
		if len(keys) > 0 {
			if err := fn(keys); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// tally counts the keys a scan saw, by what they are.
type tally struct {
	Scanned int64 `json:"scanned"` // keys the SCAN returned
	Locks   int64 `json:"locks"`   // live locks
	Limits  int64 `json:"limits"`  // concurrency limits with live slots
	Slots   int64 `json:"slots"`   // the live slots of those limits
	Expired int64 `json:"expired"` // locks and limits past their expiry, not yet removed
	Index   int64 `json:"index"`   // index keys (and release tombstones)
	Fence   int64 `json:"fence"`   // fence counters
	Done    int64 `json:"done"`    // done markers
	Records int64 `json:"records"` // stored records (replay)
	Queue   int64 `json:"queue"`   // waiter queues
	Config  int64 `json:"config"`  // the backends' configuration record
	Other   int64 `json:"other"`   // not syncguard data of this prefix and layout
	// NotMatching counts the locks and limits whose key does not match
	// --match.
	NotMatching int64 `json:"notMatching"`
	// Elections counts the live locks (of Locks) that are terms of a
	// leader election.
	Elections int64 `json:"elections"`
	// ReadWrite counts the read-write locks (lock/rwlock) with live
	// holders, Holders those holders.
	ReadWrite int64 `json:"readWrite"`
	Holders   int64 `json:"holders"`
}

// found is a live lock found by a scan.
type found struct {
	redisKey string
	data     wire.LockData
}

// page is the live locks and limits of one SCAN page.
type page struct {
	node   *redis.Client
	nowMs  int64 // the node's TIME when the page's values were read
	locks  []found
	limits []foundLimit
	index  []string // the index keys of the page (every one, whatever --match)
}

// foundLimit is a limit with live slots found by a scan.
type foundLimit struct {
	redisKey string
	data     limitData
}

// scanLocks calls fn with the live locks and limits of each SCAN page of
// the prefix's keys whose key matches glob (globMatch), node after node,
// and counts every key it sees in t. It reads each page's candidates and
// the server's TIME in one pipeline (and the limits among them in two
// more), and keeps one page at a time, whatever the number of keys.
func (s *session) scanLocks(ctx context.Context, glob string, t *tally, fn func(p page) error) error {
	nodes, err := s.nodes(ctx)
	if err != nil {
		return err
	}
	pattern := s.names.scanPattern()
	for _, node := range nodes {
		err := scanKeys(ctx, node, pattern, func(keys []string) error {
			p, err := s.readPage(ctx, node, keys, glob, t)
			if err != nil {
				return err
			}
			return fn(p)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// readPage classifies keys by name and reads the values of the lock keys
// that may match glob.
func (s *session) readPage(ctx context.Context, node *redis.Client, keys []string, glob string, t *tally) (page, error) {
	t.Scanned += int64(len(keys))
	candidates, index := s.classifyPage(keys, glob, t)
	gets, nowMs, err := getWithTime(ctx, node, candidates)
	if err != nil {
		return page{}, err
	}
	p := page{node: node, nowMs: nowMs, index: index}
	others, err := s.addLocks(ctx, &p, candidates, gets, glob, t)
	if err == nil && len(others) > 0 {
		err = s.addLimits(ctx, &p, others, glob, t)
	}
	if err != nil {
		return page{}, err
	}
	return p, nil
}

// classifyPage counts keys by what their names say and returns the lock
// keys that may match glob (the candidates) and the index keys.
func (s *session) classifyPage(keys []string, glob string, t *tally) (candidates, index []string) {
	candidates = keys[:0:0]
	for _, k := range keys {
		switch s.names.classify(k) {
		case kindLock:
			if !s.names.mayMatch(k, glob) {
				t.NotMatching++
				continue
			}
			candidates = append(candidates, k)
		case kindIndex:
			t.Index++
			index = append(index, k)
		case kindConfig:
			t.Config++
		case kindFence:
			t.Fence++
		case kindDone:
			t.Done++
		case kindRecord:
			t.Records++
		case kindQueue:
			t.Queue++
		}
	}
	return candidates, index
}

// getWithTime reads keys with GET and the node's TIME in one pipeline; the
// GETs' errors are left in their commands.
func getWithTime(ctx context.Context, node *redis.Client, keys []string) ([]*redis.StringCmd, int64, error) {
	pipe := node.Pipeline()
	gets := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		gets[i] = pipe.Get(ctx, k)
	}
	now := pipe.Time(ctx)
	_, _ = pipe.Exec(ctx) // each command's error is read by the caller
	if err := now.Err(); err != nil {
		return nil, 0, redisError(ctx, node.Options().Addr, err)
	}
	return gets, now.Val().UnixMilli(), nil
}

// addLocks adds to p the live locks among the candidates that match glob,
// counting the rest, and returns the keys that hold no string: limits
// (sorted sets), or foreign keys.
func (s *session) addLocks(ctx context.Context, p *page, candidates []string, gets []*redis.StringCmd, glob string, t *tally) ([]string, error) {
	var others []string
	for i, k := range candidates {
		raw, err := gets[i].Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue // expired or deleted since the SCAN
		case err != nil && !isWrongType(err):
			return nil, redisError(ctx, p.node.Options().Addr, err)
		case err != nil: // WRONGTYPE: a limit's sorted set, a hash, a set...
			others = append(others, k)
			continue
		}
		d, err := wire.DecodeLockData(raw)
		if err != nil || !s.names.isLockOf(k, d.Key) {
			t.Other++
			continue
		}
		if glob != "*" && !globMatch(glob, d.Key) {
			t.NotMatching++
			continue
		}
		if !d.Live(p.nowMs) {
			t.Expired++
			continue
		}
		t.Locks++
		if d.Election() {
			t.Elections++
		}
		p.locks = append(p.locks, found{redisKey: k, data: d})
	}
	return others, nil
}

// addLimits reads the keys that may be limits and adds to p the live ones
// that match glob, counting the rest.
func (s *session) addLimits(ctx context.Context, p *page, keys []string, glob string, t *tally) error {
	reads, err := s.readLimits(ctx, p.node, keys, p.nowMs)
	if err != nil {
		return err
	}
	for i, r := range reads {
		if r.state == limitLive && glob != "*" && !globMatch(glob, r.limit.key) {
			t.NotMatching++
			continue
		}
		switch {
		case r.state == limitLive && r.limit.rw:
			t.ReadWrite++
			t.Holders += int64(len(r.limit.slots))
			p.limits = append(p.limits, foundLimit{redisKey: keys[i], data: r.limit})
		case r.state == limitLive:
			t.Limits++
			t.Slots += int64(len(r.limit.slots))
			p.limits = append(p.limits, foundLimit{redisKey: keys[i], data: r.limit})
		case r.state == limitExpired:
			t.Expired++
		case r.state == limitOther:
			t.Other++
		}
	}
	return nil
}

// isReply reports whether err is the server's answer to one command (such
// as WRONGTYPE) rather than a failure to get an answer.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// isWrongType reports whether err is Redis's WRONGTYPE reply: the key
// holds a value of another type. Any other reply, such as NOPERM, says
// nothing of the key's value.
func isWrongType(err error) bool { return redis.HasErrorPrefix(err, "WRONGTYPE") }
