package cli

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// A concurrency limit (lock.WithLimit) keeps its slots in a sorted set at
// the lock key, lock id -> expiresAtMs by the server's clock (expired
// members linger until a script reclaims them); each slot's index key
// "<tag prefix>:id:<lock id>" holds
//
//	"\x01<fence> <acquiredAtMs> <n> <lock key length> <lock key><user key>"
//
// (see redisbackend/limit.go). A read-write lock (lock/rwlock) keeps its
// holders the same way, as members "r<lock id>" (a reader) or "w<lock id>"
// (the writer), each index key holding a wire.RWIndex; it is read here as
// a limit whose slots have a mode. A lock key is one of the three, never
// two at once.

// slotData is one live slot of a limit.
type slotData struct {
	lockID       string
	fence        lock.Fence
	acquiredAtMs int64
	expiresAtMs  int64
	n            int  // the limit of its grant; 0 for a read-write lock's holder
	mode         byte // 'r' or 'w' for a read-write lock's holder; 0 for a slot
}

// holder is the slot's lock id as operators see it (holderOf).
func (s slotData) holder() string { return holderOf(s.lockID) }

// limitData is a limit key with live slots.
type limitData struct {
	key     string     // the user key, as the slots' index keys name it
	slots   []slotData // earliest expiry first
	waiters int64      // entries in the key's queue
	rw      bool       // a read-write lock: its slots are readers or a writer
}

// latest is the slot of the most recent grant: fences increase in grant
// order. Its n is the limit shown (as LookupLimit's Limit).
func (l limitData) latest() slotData {
	last := l.slots[0]
	for _, s := range l.slots[1:] {
		if s.fence.Compare(last.fence) > 0 {
			last = s
		}
	}
	return last
}

// limitState is what readLimits found at a sorted set.
type limitState int

const (
	limitLive    limitState = iota // live slots of a limit of this prefix
	limitExpired                   // a limit whose slots all expired, not yet removed
	limitGone                      // deleted, or every slot released, since it was seen
	limitOther                     // not a limit of this prefix and layout
)

// limitRead is one key's result of readLimits.
type limitRead struct {
	state limitState
	limit limitData // when limitLive
}

// readAttempts bounds how often readLimits reads a limit again whose slot
// was released between its two reads.
const readAttempts = 3

// readLimits reads the lock keys redisKeys of node that hold something
// other than a string (they answered GET with WRONGTYPE) as limits: their
// live slots by nowMs (the node's TIME: a slot is live until its expiry,
// with no tolerance, as the scripts judge it) and the slots' index keys, in two pipelines. A slot released
// between the two (its index a tombstone) may have been replaced by one
// the first did not see: such a limit is read again, a few times at most.
func (s *session) readLimits(ctx context.Context, node *redis.Client, redisKeys []string, nowMs int64) ([]limitRead, error) {
	reads, changed, err := s.readLimitsOnce(ctx, node, redisKeys, nowMs)
	for range readAttempts - 1 {
		if err != nil || len(changed) == 0 {
			break
		}
		again := make([]string, len(changed))
		for i, j := range changed {
			again[i] = redisKeys[j]
		}
		var more []limitRead
		var moreChanged []int
		more, moreChanged, err = s.readLimitsOnce(ctx, node, again, nowMs)
		for i, r := range more {
			reads[changed[i]] = r
		}
		for i := range moreChanged {
			moreChanged[i] = changed[moreChanged[i]]
		}
		changed = moreChanged
	}
	return reads, err
}

// readLimitsOnce is one read of readLimits; changed lists the limits of
// which a slot was released between the two pipelines.
func (s *session) readLimitsOnce(ctx context.Context, node *redis.Client, redisKeys []string, nowMs int64) (reads []limitRead, changed []int, err error) {
	addr := node.Options().Addr
	sets := s.readLimitSets(ctx, node, redisKeys, nowMs)
	reads = make([]limitRead, len(redisKeys))
	indexes := make([][]*redis.StringCmd, len(redisKeys))
	pipe := node.Pipeline()
	for i, k := range redisKeys {
		reads[i], indexes[i], err = s.limitSlots(ctx, pipe, k, sets[i])
		if err != nil {
			return nil, nil, redisError(ctx, addr, err)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !isReply(err) {
		return nil, nil, redisError(ctx, addr, err)
	}
	for i, k := range redisKeys {
		if reads[i].state == limitLive && s.indexSlots(k, &reads[i], indexes[i]) {
			changed = append(changed, i)
		}
	}
	return reads, changed, nil
}

// limitSet is what the first pipeline of readLimitsOnce asks of one key.
type limitSet struct {
	live  *redis.ZSliceCmd      // the live members and their expiry
	first *redis.StringSliceCmd // the first member, live or not
	queue *redis.IntCmd         // the length of the key's waiter queue
}

// readLimitSets reads, in one pipeline, the live members of the sorted
// sets at redisKeys by nowMs, their first member and their queues' length.
// The commands' errors are left in them.
func (s *session) readLimitSets(ctx context.Context, node *redis.Client, redisKeys []string, nowMs int64) []limitSet {
	cutoff := "(" + strconv.FormatInt(nowMs, 10)
	pipe := node.Pipeline()
	sets := make([]limitSet, len(redisKeys))
	for i, k := range redisKeys {
		// No more than lockdriver.MaxLimit slots are ever live: a set with more
		// is not a limit.
		sets[i].live = pipe.ZRangeByScoreWithScores(ctx, k, &redis.ZRangeBy{Min: cutoff, Max: "+inf", Count: lockdriver.MaxLimit + 1})
		sets[i].first = pipe.ZRange(ctx, k, 0, 0)
		sets[i].queue = pipe.ZCard(ctx, s.names.queueKey(k))
	}
	_, _ = pipe.Exec(ctx) // each command's error is read by the caller
	return sets
}

// limitSlots tells from set what the key k holds. For a live limit it
// returns the slots by lock id and expiry, and queues on pipe a GET of
// each slot's index key. The error is one of a failure to get an answer.
func (s *session) limitSlots(ctx context.Context, pipe redis.Pipeliner, k string, set limitSet) (limitRead, []*redis.StringCmd, error) {
	var r limitRead
	members, err := set.live.Result()
	switch {
	case err != nil && !isReply(err):
		return r, nil, err
	case err != nil || len(members) > lockdriver.MaxLimit: // WRONGTYPE: a hash, a set...
		return limitRead{state: limitOther}, nil, nil
	case len(members) == 0:
		r.state = limitExpired
		if f := set.first.Val(); len(f) == 0 {
			r.state = limitGone
		} else if _, _, ok := holderMember(f[0]); !ok {
			r.state = limitOther
		}
		return r, nil, nil
	}
	tagPrefix, _, ok := s.names.split(k)
	if !ok {
		return limitRead{state: limitOther}, nil, nil
	}
	r.limit.waiters = set.queue.Val() // 0 without a queue
	var indexes []*redis.StringCmd
	for i, m := range members {
		member, _ := m.Member.(string)
		id, mode, ok := holderMember(member)
		if !ok || (i > 0 && (mode != 0) != r.limit.rw) {
			r.state = limitOther
			break
		}
		r.limit.rw = mode != 0
		r.limit.slots = append(r.limit.slots, slotData{lockID: id, expiresAtMs: int64(m.Score), mode: mode})
		indexes = append(indexes, pipe.Get(ctx, wire.IndexKey(tagPrefix, id)))
	}
	return r, indexes, nil
}

// indexSlots completes the live limit r at k from its slots' index keys:
// its user key, and each slot's fence, grant time and limit. It drops the
// slots released since they were read and reports whether there were any.
func (s *session) indexSlots(k string, r *limitRead, indexes []*redis.StringCmd) (released bool) {
	slots, foreign := r.limit.slots[:0], false
	for j, sl := range r.limit.slots {
		raw, err := indexes[j].Result()
		if err != nil || wire.IsTombstone(raw) {
			released = released || wire.IsTombstone(raw) // released since the read
			continue                                     // (or its index evicted)
		}
		ix, err := decodeHolderIndex(raw, sl.mode)
		if err != nil || ix.LockKey != k || (r.limit.key != "" && ix.UserKey != r.limit.key) {
			foreign = true
			break
		}
		r.limit.key = ix.UserKey
		sl.fence, sl.acquiredAtMs, sl.n = ix.Fence, ix.AcquiredAtMs, ix.N
		slots = append(slots, sl)
	}
	r.limit.slots = slots
	switch {
	case foreign || (len(slots) > 0 && !s.names.isLockOf(k, r.limit.key)):
		r.state = limitOther
	case len(slots) == 0:
		r.state = limitGone
	}
	return released
}

// holderMember reads a member of a limit's or a read-write lock's sorted
// set: a slot's lock id (mode 0), or a reader's or writer's ('r', 'w').
func holderMember(m string) (id string, mode byte, ok bool) {
	if lockdriver.ValidateLockID(m) == nil {
		return m, 0, true
	}
	if len(m) == lockdriver.LockIDLen+1 && (m[0] == 'r' || m[0] == 'w') && lockdriver.ValidateLockID(m[1:]) == nil {
		return m[1:], m[0], true
	}
	return "", 0, false
}

// decodeHolderIndex reads the index value of a slot (mode 0) or of a
// read-write lock's holder, as a slot's (N 0 for a holder).
func decodeHolderIndex(raw string, mode byte) (wire.SlotIndex, error) {
	if mode == 0 {
		return wire.DecodeSlotIndex(raw)
	}
	ix, err := wire.DecodeRWIndex(raw)
	if err != nil || ix.Mode != mode {
		return wire.SlotIndex{}, wire.ErrNotRWIndex
	}
	return wire.SlotIndex{Fence: ix.Fence, AcquiredAtMs: ix.AcquiredAtMs, LockKey: ix.LockKey, UserKey: ix.UserKey}, nil
}
