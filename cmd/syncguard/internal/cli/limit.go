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
// (see redisbackend/limit.go). A lock key is a lock (a string) or a limit
// (a sorted set), never both.

// slotData is one live slot of a limit.
type slotData struct {
	lockID       string
	fence        lock.Fence
	acquiredAtMs int64
	expiresAtMs  int64
	n            int // the limit of its grant
}

// holder is the slot's lock id as operators see it (holderOf).
func (s slotData) holder() string { return holderOf(s.lockID) }

// limitData is a limit key with live slots.
type limitData struct {
	key     string     // the user key, as the slots' index keys name it
	slots   []slotData // earliest expiry first
	waiters int64      // entries in the key's queue
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
// live slots by nowMs (the node's TIME, less wire.TimeToleranceMs, as
// wire.IsLive) and the slots' index keys, in two pipelines. A slot released
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
	cutoff := "(" + strconv.FormatInt(nowMs-wire.TimeToleranceMs, 10)
	pipe := node.Pipeline()
	live := make([]*redis.ZSliceCmd, len(redisKeys))
	first := make([]*redis.StringSliceCmd, len(redisKeys))
	queues := make([]*redis.IntCmd, len(redisKeys))
	for i, k := range redisKeys {
		// No more than lockdriver.MaxLimit slots are ever live: a set with more
		// is not a limit.
		live[i] = pipe.ZRangeByScoreWithScores(ctx, k, &redis.ZRangeBy{Min: cutoff, Max: "+inf", Count: lockdriver.MaxLimit + 1})
		first[i] = pipe.ZRange(ctx, k, 0, 0)
		queues[i] = pipe.ZCard(ctx, s.names.queueKey(k))
	}
	_, _ = pipe.Exec(ctx) // each command's error is read below
	reads = make([]limitRead, len(redisKeys))
	indexes := make([][]*redis.StringCmd, len(redisKeys))
	pipe = node.Pipeline()
	for i, k := range redisKeys {
		members, err := live[i].Result()
		switch {
		case err != nil && !isReply(err):
			return nil, nil, redisError(ctx, addr, err)
		case err != nil || len(members) > lockdriver.MaxLimit: // WRONGTYPE: a hash, a set...
			reads[i].state = limitOther
			continue
		case len(members) == 0:
			reads[i].state = limitExpired
			if f := first[i].Val(); len(f) == 0 {
				reads[i].state = limitGone
			} else if lockdriver.ValidateLockID(f[0]) != nil {
				reads[i].state = limitOther
			}
			continue
		}
		tagPrefix, _, ok := s.names.split(k)
		if !ok {
			reads[i].state = limitOther
			continue
		}
		reads[i].limit.waiters = queues[i].Val() // 0 without a queue
		for _, m := range members {
			id, _ := m.Member.(string)
			if lockdriver.ValidateLockID(id) != nil {
				reads[i].state = limitOther
				break
			}
			reads[i].limit.slots = append(reads[i].limit.slots, slotData{lockID: id, expiresAtMs: int64(m.Score)})
			indexes[i] = append(indexes[i], pipe.Get(ctx, wire.IndexKey(tagPrefix, id)))
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && !isReply(err) {
		return nil, nil, redisError(ctx, addr, err)
	}
	for i, k := range redisKeys {
		r := &reads[i]
		if r.state != limitLive {
			continue
		}
		slots, foreign := r.limit.slots[:0], false
		for j, s := range r.limit.slots {
			raw, err := indexes[i][j].Result()
			if err != nil || wire.IsTombstone(raw) {
				if wire.IsTombstone(raw) && (len(changed) == 0 || changed[len(changed)-1] != i) {
					changed = append(changed, i) // released since the read
				}
				continue // (or its index evicted)
			}
			ix, err := wire.DecodeSlotIndex(raw)
			if err != nil || ix.LockKey != k || (r.limit.key != "" && ix.UserKey != r.limit.key) {
				foreign = true
				break
			}
			r.limit.key = ix.UserKey
			s.fence, s.acquiredAtMs, s.n = ix.Fence, ix.AcquiredAtMs, ix.N
			slots = append(slots, s)
		}
		r.limit.slots = slots
		switch {
		case foreign || (len(slots) > 0 && !s.names.isLockOf(k, r.limit.key)):
			r.state = limitOther
		case len(slots) == 0:
			r.state = limitGone
		}
	}
	return reads, changed, nil
}
