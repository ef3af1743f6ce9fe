package redisbackend

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// Acquire takes the lock on key for ttl, once. On contention it returns a
// *lock.LockedError (matching lock.ErrLocked) carrying the holder's expiry.
// A fence counter past wire.FenceMax fails with lock.CodeInternal and
// leaves no lock behind. It is AcquireID with a fresh NewLockID.
func (b *Backend) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	return b.acquire(ctx, key, "", 0, ttl, nil)
}

// NewLockID implements lock.IDBackend: a fresh lock id for a lease on key
// (in the cluster layout it starts with the key's hash tag, so the id
// alone finds the lease's slot). In the single layout the id does not
// depend on the key, which AcquireID validates: NewLockID then does no
// key work, keeping it off the hot path.
func (b *Backend) NewLockID(key string) (string, error) {
	if b.layout != LayoutCluster {
		return lockdriver.NewLockID(), nil
	}
	_, lockKey, err := b.lockKey("acquire", key)
	if err != nil {
		return "", err
	}
	return b.newLockID(lockKey), nil
}

// AcquireID implements lock.IDBackend: Acquire with the lock id id, which
// must come from NewLockID(key). Sent again with the id of the live lease
// on key, it returns that lease (same fence and expiry) instead of
// lock.ErrLocked; once that lease was released (or id was released
// without ever being granted), it fails with an error matching
// lock.ErrNotHeld and takes nothing.
func (b *Backend) AcquireID(ctx context.Context, key, id string, ttl time.Duration) (lock.Lease, error) {
	if err := lockdriver.ValidateLockID(id); err != nil {
		return lock.Lease{}, withOp(err, "acquire")
	}
	return b.acquire(ctx, key, id, 0, ttl, nil)
}

// acquire runs the acquire script with lock id id, or a fresh one when id
// is "": for the lock, or for a slot among n when n > 0. With a waiter q,
// a busy key also queues q's entry.
func (b *Backend) acquire(ctx context.Context, key, id string, n int, ttl time.Duration, q *queueWaiter) (lock.Lease, error) {
	c, err := b.newAcquireCall(ctx, key, id, ttl)
	if err != nil {
		return lock.Lease{}, err
	}
	reply, err := b.acquireReply(ctx, c, b.sendAcquire(ctx, c, n, q), ttl)
	if err != nil {
		return lock.Lease{}, err
	}
	return b.leaseOf(ctx, c, reply, ttl)
}

// acquireReply returns the reply of cmd, the call of an acquire script
// for c, or its mapped error.
func (b *Backend) acquireReply(ctx context.Context, c acquireCall, cmd *redis.Cmd, ttl time.Duration) (any, error) {
	reply, err := cmd.Result()
	if err != nil {
		err = mapError(ctx, "acquire", err)
		if c.own && mayHaveRun(err) {
			// The script may have taken the lock (a lost reply): release
			// the id, which also keeps a late copy of the command from
			// taking the key.
			go b.releaseAbandoned(ctx, b.indexKey(c.id), c.id, ttl)
		}
		return nil, err
	}
	return reply, nil
}

// acquireCall is one acquisition's validated arguments.
type acquireCall struct {
	norm, lockKey, fenceKey string
	id                      string
	own                     bool // the id is this call's own: the caller cannot release it
	ttlMs                   int64
}

// newAcquireCall validates an acquisition's arguments, before any I/O, and
// picks a lock id when id is "".
func (b *Backend) newAcquireCall(ctx context.Context, key, id string, ttl time.Duration) (acquireCall, error) {
	const op = "acquire"
	if err := checkCtx(op, ctx); err != nil {
		return acquireCall{}, err
	}
	norm, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return acquireCall{}, err
	}
	ttlMs, err := validTTL(op, ttl)
	if err != nil {
		return acquireCall{}, err
	}
	fenceKey, err := b.fenceKey(norm, lockKey)
	if err != nil {
		return acquireCall{}, withOp(err, op)
	}
	c := acquireCall{norm: norm, lockKey: lockKey, fenceKey: fenceKey, id: id, own: id == "", ttlMs: ttlMs}
	if c.own {
		c.id = b.newLockID(lockKey)
	} else if b.layout == LayoutCluster && id[:tagLen] != b.lockTag(lockKey) {
		return acquireCall{}, lockdriver.InvalidArgument(op, "lock id was not made by NewLockID for this key (its hash tag differs)")
	}
	return c, nil
}

// sendAcquire sends c: to acquire_slot.lua for a slot among n (n > 0),
// else to acquire.lua (followed by WAIT with ReplicaAck); with a waiter q,
// with its queue entry.
func (b *Backend) sendAcquire(ctx context.Context, c acquireCall, n int, q *queueWaiter) *redis.Cmd {
	if n > 0 {
		return b.run(ctx, b.acquireSlotCmd(c, n, q))
	}
	if b.ack.N > 0 {
		return b.runAcquireAcked(ctx, c, b.acquireCmd(c, q))
	}
	return b.run(ctx, b.acquireCmd(c, q))
}

// acquireCmd is the call of acquire.lua for c: KEYS lock key, index key,
// fence key and, with a waiter q, its queue key; ARGV lock id, ttl in ms,
// the user key as JSON text, then the striped-fence flag and q's entry,
// its queued flag and the queue's TTL, each only when needed (every ARGV
// costs the script: the cycle of a free key sends three).
func (b *Backend) acquireCmd(c acquireCall, q *queueWaiter) scriptCmd {
	idKey, text := b.indexKey(c.id), wire.JSONText(c.norm)
	switch {
	case q != nil:
		return acquireScript.cmd(4, c.lockKey, idKey, c.fenceKey, q.queueKey,
			c.id, b.ttlBox(c.ttlMs), text, b.stripedArg, q.entry, boolArg(q.queued), q.queueTTL)
	case b.stripes > 0:
		return acquireScript.cmd(3, c.lockKey, idKey, c.fenceKey, c.id, b.ttlBox(c.ttlMs), text, b.stripedArg)
	}
	return acquireScript.cmd(3, c.lockKey, idKey, c.fenceKey, c.id, b.ttlBox(c.ttlMs), text)
}

// boxedMs is a TTL in ms and the same boxed for a script's arguments.
type boxedMs struct {
	ms  int64
	arg any
}

// ttlBox returns ms boxed, without allocating when it is the TTL of the
// previous acquisition: a program's TTLs are mostly one constant.
func (b *Backend) ttlBox(ms int64) any {
	if t := b.ttlArg.Load(); t != nil && t.ms == ms {
		return t.arg
	}
	t := &boxedMs{ms: ms, arg: ms}
	b.ttlArg.Store(t)
	return t.arg
}

// acquireSlotCmd is the call of acquire_slot.lua for c, a slot among n:
// KEYS lock key, index key, fence key and, with a waiter q, its queue key;
// ARGV lock id, ttl in ms, user key, striped-fence flag, n, the start of
// the queue keys and, with q, its entry, queued flag and the queue's TTL.
func (b *Backend) acquireSlotCmd(c acquireCall, n int, q *queueWaiter) scriptCmd {
	idKey := b.indexKey(c.id)
	if q == nil {
		return acquireSlotScript.cmd(3, c.lockKey, idKey, c.fenceKey,
			c.id, c.ttlMs, c.norm, b.stripedArg, n, b.queueArg)
	}
	return acquireSlotScript.cmd(4, c.lockKey, idKey, c.fenceKey, q.queueKey,
		c.id, c.ttlMs, c.norm, b.stripedArg, n, b.queueArg, q.entry, boolArg(q.queued), q.queueTTL)
}

// leaseOf reads the reply of c's acquire script: the lease it granted, or
// the outcome that is not a grant as the error. A grant it cannot read is
// released in the background: no lock is left that nobody can describe.
func (b *Backend) leaseOf(ctx context.Context, c acquireCall, reply any, ttl time.Duration) (lock.Lease, error) {
	const op = "acquire"
	var fenceStr string
	var exp int64
	switch res := reply.(type) {
	case string:
		// Granted: the lease's lock data.
		var ok bool
		if fenceStr, exp, ok = wire.DecodeGrant(res); !ok {
			go b.releaseAbandoned(ctx, b.indexKey(c.id), c.id, lockdriver.DefaultReleaseTimeout)
			return lock.Lease{}, internal(op, "unexpected lock data from the acquire script")
		}
	case []any:
		var err error
		if fenceStr, exp, err = tableReply(res); err != nil {
			return lock.Lease{}, err
		}
	default:
		return lock.Lease{}, internal(op, "unexpected reply from the acquire script")
	}
	l, err := b.grantedLease(c.norm, c.id, fenceStr, exp, ttl)
	if err != nil {
		go b.releaseAbandoned(ctx, b.indexKey(c.id), c.id, lockdriver.DefaultReleaseTimeout)
		return lock.Lease{}, withOp(err, op)
	}
	return l, nil
}

// tableReply reads a reply of the acquire scripts that is a table: a
// grant of acquire_slot.lua ({1, fence, expiresAtMs}, the fence a number
// when that run granted it, the string of the slot's index when it returns
// an earlier run's grant), or an outcome that is not a grant, returned as
// the error.
func tableReply(res []any) (fence string, exp int64, err error) {
	const op = "acquire"
	if len(res) < 1 {
		return "", 0, internal(op, "unexpected reply from the acquire script")
	}
	status, _ := res[0].(int64)
	switch {
	case status == 1 && len(res) >= 3:
	case status == 0 && len(res) >= 2:
		exp, _ := res[1].(int64)
		le := &lock.LockedError{}
		if exp > 0 {
			le.ExpiresAt = msTime(exp)
		}
		return "", 0, le
	case status == -3:
		return "", 0, internal(op, "fence counter exceeded "+string(wire.FenceMax)+"; rotate to a new key (no lock was taken)")
	case status == -4:
		// The id was released (by its holder, or by an attempt that gave
		// it up, such as ReplicaAck's): it takes nothing any more.
		return "", 0, &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}
	default:
		return "", 0, internal(op, "unexpected status from the acquire script")
	}
	switch f := res[1].(type) {
	case string:
		fence = f
	case int64:
		if f > 0 {
			ff, _ := lockdriver.FormatFence(uint64(f))
			fence = string(ff)
		}
	}
	exp, _ = res[2].(int64)
	return fence, exp, nil
}

// grantedLease is the lease a script granted on key norm to lock id: fence
// fenceStr, expiring at exp (server ms). It logs the fence warning.
func (b *Backend) grantedLease(norm, id, fenceStr string, exp int64, ttl time.Duration) (lock.Lease, error) {
	fence, warn, err := wire.CheckFence(fenceStr)
	if err != nil {
		return lock.Lease{}, err
	}
	if exp <= 0 {
		return lock.Lease{}, internal("acquire", "unexpected expiry from the acquire script")
	}
	if warn {
		b.log.Warn("syncguard: fence counter past the warning threshold; plan a key rotation",
			"key_hash", lockdriver.HashKey(norm), "fence", fenceStr, "threshold", string(wire.FenceWarn))
	}
	return lock.Lease{Key: norm, ID: id, Fence: fence, TTL: ttl, ExpiresAt: msTime(exp)}, nil
}
