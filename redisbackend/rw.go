package redisbackend

import (
	"context"
	"errors"
	"time"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

// Read-write locks (package lock/rwlock). The lock key of a read-write
// lock is a sorted set of its holders, "r<lock id>" for a reader and
// "w<lock id>" for the writer -> expiresAtMs. A holder's index key holds
//
//	"\x021 <r|w> <fence> <acquiredAtMs> <expiresAtMs> <lock key length> <lock key><user key>"
//
// (version 1, wire.RWIndex), so Release, Extend, ExtendBatch and LookupID find it by its
// id as they find a lock. It expires with its holder, so a release reads no clock. Holders take their fences from the key's counter
// and wait in the key's queue, their entries' flags ending in their mode.
// A key is a lock, a limit or a read-write lock, never two at once.
// scripts/rw.lua has the rules; docs/readwrite.md the guarantees.

var _ rwlock.Backend = (*Backend)(nil)

// AcquireRW implements rwlock.Backend: one attempt to hold key in mode
// with lock id id for ttl. On contention it returns a *lock.LockedError
// with the latest expiry among the holders. Safe to repeat. With
// Options.ReplicaAck it fails with an error matching errors.ErrUnsupported.
func (b *Backend) AcquireRW(ctx context.Context, key, id string, mode rwlock.Mode, ttl time.Duration) (lock.Lease, error) {
	m, err := b.rwUsable(mode)
	if err != nil {
		return lock.Lease{}, err
	}
	if err := lockdriver.ValidateLockID(id); err != nil {
		return lock.Lease{}, withOp(err, "acquire")
	}
	return b.acquireRW(ctx, key, id, m, ttl, nil)
}

// rwUsable checks mode and that this Backend can grant read-write locks,
// and returns the mode's letter in the scripts.
func (b *Backend) rwUsable(mode rwlock.Mode) (byte, error) {
	if b.ack.N > 0 {
		return 0, &lock.Error{Code: lock.CodeInvalidArgument, Op: "acquire",
			Msg: "read-write locks are not available with Options.ReplicaAck", Err: errors.ErrUnsupported}
	}
	switch mode {
	case rwlock.ModeRead:
		return 'r', nil
	case rwlock.ModeWrite:
		return 'w', nil
	}
	return 0, lockdriver.InvalidArgument("acquire", "mode must be rwlock.ModeRead or rwlock.ModeWrite")
}

// acquireRW runs acquire_rw.lua for mode m ('r' or 'w'); with a waiter q,
// a busy key also queues q's entry. A grant of that run is answered with
// the holder's index value (a string: cheaper for Redis than a table).
func (b *Backend) acquireRW(ctx context.Context, key, id string, m byte, ttl time.Duration, q *queueWaiter) (lock.Lease, error) {
	c, err := b.newAcquireCall(ctx, key, id, ttl)
	if err != nil {
		return lock.Lease{}, err
	}
	reply, err := b.acquireReply(ctx, c, b.run(ctx, b.acquireRWCmd(c, m, q)), ttl)
	if err != nil {
		return lock.Lease{}, err
	}
	if s, ok := reply.(string); ok {
		// This run's grant: the holder's index value.
		h, err := wire.DecodeRWIndex(s)
		if err == nil {
			var l lock.Lease
			if l, err = b.grantedLease(c.norm, c.id, string(h.Fence), h.ExpiresAtMs, ttl); err == nil {
				return l, nil
			}
			err = withOp(err, "acquire")
		} else {
			err = internal("acquire", "unexpected reply from the read-write acquire script")
		}
		go b.releaseAbandoned(ctx, b.indexKey(c.id), c.id, lockdriver.DefaultReleaseTimeout)
		return lock.Lease{}, err
	}
	return b.leaseOf(ctx, c, reply, ttl)
}

// modeArgs are the scripts' mode arguments, boxed once.
var modeArgs = [2]any{"r", "w"}

// acquireRWCmd is the call of acquire_rw.lua for c in mode m: KEYS lock
// key, index key, fence key and, with a waiter q, its queue key; ARGV lock
// id, ttl in ms, user key, striped-fence flag, mode, the start of the
// queue keys and, with q, its entry, queued flag and the queue's TTL.
func (b *Backend) acquireRWCmd(c acquireCall, m byte, q *queueWaiter) scriptCmd {
	idKey, mode := b.indexKey(c.id), modeArgs[0]
	if m == 'w' {
		mode = modeArgs[1]
	}
	if q == nil {
		return acquireRWScript.cmd(3, c.lockKey, idKey, c.fenceKey,
			c.id, c.ttlMs, c.norm, b.stripedArg, mode, b.queueArg)
	}
	return acquireRWScript.cmd(4, c.lockKey, idKey, c.fenceKey, q.queueKey,
		c.id, c.ttlMs, c.norm, b.stripedArg, mode, b.queueArg, q.entry, boolArg(q.queued), q.queueTTL)
}

// JoinRW implements rwlock.Backend: the waiter of id for key in mode. It
// does no I/O. It returns an error matching errors.ErrUnsupported when
// hand-offs are off, as Join does.
func (b *Backend) JoinRW(key, id string, mode rwlock.Mode, ttl, wait time.Duration) (lock.Waiter, error) {
	m, err := b.rwUsable(mode)
	if err != nil {
		return nil, err
	}
	w, err := b.Join(key, id, 0, ttl, wait)
	if err != nil {
		return nil, err
	}
	w.(*queueWaiter).mode = m
	return w, nil
}

// LookupRW implements rwlock.Backend: the live holders of key, or nil,
// nil when none. A live plain lock or limit on key gives an error
// matching lock.ErrKindMismatch.
func (b *Backend) LookupRW(ctx context.Context, key string) (*rwlock.Info, error) {
	hs, err := b.liveRWHolders(ctx, "lookup", key)
	if err != nil {
		return nil, err
	}
	return rwInfo(hs), nil
}

// rwHolder is a live holder of a read-write lock.
type rwHolder struct {
	id   string // its lock id
	mode byte   // 'r' or 'w'
	info lock.Info
}

// liveRWHolders reads the live holders of key's read-write lock that have
// an index key, earliest expiry first.
func (b *Backend) liveRWHolders(ctx context.Context, op, key string) ([]rwHolder, error) {
	var hs []rwHolder
	cmd := func(lockKey string) scriptCmd { return lookupRWScript.cmd(1, lockKey, b.indexPrefix(lockKey)) }
	err := b.scanHeld(ctx, op, key, cmd, func(info lock.Info, member, idx string) {
		h, err := wire.DecodeRWIndex(idx)
		if err != nil || len(member) < 2 {
			return // no index (gone, or ending now)
		}
		// The member is the mode's letter, then the lock id.
		info.IDHash, info.Fence, info.AcquiredAt = lockdriver.HashKey(member[1:]), h.Fence, msTime(h.AcquiredAtMs)
		hs = append(hs, rwHolder{id: member[1:], mode: member[0], info: info})
	})
	return hs, err
}

// rwInfo is hs as an rwlock.Info: nil when empty.
func rwInfo(hs []rwHolder) *rwlock.Info {
	if len(hs) == 0 {
		return nil
	}
	info := &rwlock.Info{KeyHash: hs[0].info.KeyHash}
	for _, h := range hs {
		if h.mode == 'w' {
			w := h.info
			info.Writer = &w
		} else {
			info.Readers = append(info.Readers, h.info)
		}
	}
	return info
}
