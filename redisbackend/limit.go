package redisbackend

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Concurrency limits (lock.WithLimit). The lock key of a limit is a sorted
// set of its slots, lock id -> expiresAtMs. A slot's index key holds
//
//	"\x01<fence> <acquiredAtMs> <n> <lock key length> <lock key><user key>"
//
// so Release, Extend and LookupID find a slot by its id as they find a
// lock. Slots and locks share the key's fence counter and its queue. A key
// is a lock or a limit, never both at once. docs/limits.md has the rules.

// AcquireSlot implements lock.IDBackend: one attempt to take one of n
// slots of key with lock id id for ttl. When n live slots hold the key it
// returns a *lock.LockedError with their earliest expiry. Safe to repeat.
// With Options.ReplicaAck it fails with an error matching
// errors.ErrUnsupported.
func (b *Backend) AcquireSlot(ctx context.Context, key, id string, n int, ttl time.Duration) (lock.Lease, error) {
	if err := b.slotsUsable(n); err != nil {
		return lock.Lease{}, err
	}
	if err := lockdriver.ValidateLockID(id); err != nil {
		return lock.Lease{}, withOp(err, "acquire")
	}
	return b.acquire(ctx, key, id, n, ttl, nil)
}

// slotsUsable checks n and that this Backend can grant slots.
func (b *Backend) slotsUsable(n int) error {
	if b.ack.N > 0 {
		return &lock.Error{Code: lock.CodeInvalidArgument, Op: "acquire",
			Msg: "concurrency limits are not available with Options.ReplicaAck", Err: errors.ErrUnsupported}
	}
	if n < 1 || n > lockdriver.MaxLimit {
		return lockdriver.InvalidArgument("acquire", "limit must be between 1 and "+strconv.Itoa(lockdriver.MaxLimit))
	}
	return nil
}

// LookupLimit implements lock.IDBackend: the live slots of key, earliest
// expiry first, or nil, nil when none is held.
func (b *Backend) LookupLimit(ctx context.Context, key string) (*lock.LimitInfo, error) {
	slots, err := b.liveSlots(ctx, "lookup", key)
	if err != nil || len(slots) == 0 {
		return nil, err
	}
	info := &lock.LimitInfo{KeyHash: slots[0].info.KeyHash}
	var latest lock.Fence // the fence of the most recent grant: fences increase in grant order
	for _, s := range slots {
		info.Holders = append(info.Holders, s.info)
		if latest == "" || s.info.Fence.Compare(latest) > 0 {
			latest, info.Limit = s.info.Fence, s.n
		}
	}
	return info, nil
}

// heldSlot is a live slot of a limit with its raw lock id.
type heldSlot struct {
	id   string
	n    int // the limit of its grant
	info lock.Info
}

// lookupLimitCmd is the call of lookup_limit.lua: KEYS lock key; ARGV
// the index key prefix of its slots.
func (b *Backend) lookupLimitCmd(lockKey string) scriptCmd {
	return lookupLimitScript.cmd(1, lockKey, b.indexPrefix(lockKey))
}

// liveSlots reads the live slots of key that have an index key, earliest
// expiry first.
func (b *Backend) liveSlots(ctx context.Context, op, key string) ([]heldSlot, error) {
	var slots []heldSlot
	err := b.scanHeld(ctx, op, key, b.lookupLimitCmd, func(info lock.Info, id, idx string) {
		s, err := wire.DecodeSlotIndex(idx)
		if err != nil {
			return // no index (gone, or ending within the tolerance)
		}
		info.Fence, info.AcquiredAt = s.Fence, msTime(s.AcquiredAtMs)
		slots = append(slots, heldSlot{id: id, n: s.N, info: info})
	})
	return slots, err
}

// scanHeld runs the lookup script cmd of key, whose reply is a member, its
// expiry and its index value for each holder (lookup_limit.lua,
// lookup_rw.lua), and calls each with every holder's Info (its hashes and
// expiry), member and index value.
func (b *Backend) scanHeld(ctx context.Context, op, key string, cmd func(lockKey string) scriptCmd,
	each func(info lock.Info, member, idx string)) error {
	if err := checkCtx(op, ctx); err != nil {
		return err
	}
	norm, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return err
	}
	res, err := b.run(ctx, cmd(lockKey)).Slice()
	if err != nil {
		return mapError(ctx, op, err)
	}
	keyHash := lockdriver.HashKey(norm)
	for i := 0; i+2 < len(res); i += 3 {
		member, _ := res[i].(string)
		score, _ := res[i+1].(string)
		idx, _ := res[i+2].(string)
		exp, err := strconv.ParseFloat(score, 64)
		if err != nil {
			return internal(op, "unexpected holder expiry")
		}
		each(lock.Info{KeyHash: keyHash, IDHash: lockdriver.HashKey(member), ExpiresAt: msTime(int64(exp))}, member, idx)
	}
	return nil
}
