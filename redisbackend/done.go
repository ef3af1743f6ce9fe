package redisbackend

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
)

var (
	_ lock.Recorder = (*Backend)(nil)
)

// doneKey derives the done-marker key from the lock key, like the fence
// key: "<prefix>:done:<lock key>", hashed when too long.
func (b *Backend) doneKey(lockKey string) (string, error) {
	return wire.DoneKey(b.tagPrefix(lockKey), lockKey)
}

// recordKey derives the record's key from the lock key, as doneKey does:
// "<prefix>:record:<lock key>". Records have their own namespace, so a done
// marker is never read as a record, nor a record as a done marker.
func (b *Backend) recordKey(lockKey string) (string, error) {
	return wire.RecordKey(b.tagPrefix(lockKey), lockKey)
}

// ReleaseDone releases lease l and, in the same script, marks l.Key done
// for doneTTL. The marker holds the lease's fence. It returns a
// *lockdriver.NotHeldError, and writes no marker, when the lease is not held.
func (b *Backend) ReleaseDone(ctx context.Context, l lock.Lease, doneTTL time.Duration) error {
	return b.releaseMarked(ctx, l, nil, doneTTL)
}

// ReleaseRecord releases lease l and, in the same script, stores record
// for l.Key for ttl. Records are apart from done markers: IsDone does not
// report a record. It returns a *lockdriver.NotHeldError, and stores
// nothing, when the lease is not held.
func (b *Backend) ReleaseRecord(ctx context.Context, l lock.Lease, record []byte, ttl time.Duration) error {
	if record == nil {
		record = []byte{}
	}
	return b.releaseMarked(ctx, l, record, ttl)
}

// releaseMarked runs release_mark.lua: released and marked in one step.
// With a nil record it writes the done marker, else the record.
func (b *Backend) releaseMarked(ctx context.Context, l lock.Lease, record []byte, ttl time.Duration) error {
	const op = "release"
	if err := checkCtx(op, ctx); err != nil {
		return err
	}
	idKey, err := b.idKey(op, l.ID)
	if err != nil {
		return err
	}
	_, lockKey, err := b.lockKey(op, l.Key)
	if err != nil {
		return err
	}
	ttlMs, err := validTTL(op, ttl)
	if err != nil {
		return err
	}
	var markKey string
	if record == nil {
		markKey, err = b.doneKey(lockKey)
	} else {
		markKey, err = b.recordKey(lockKey)
	}
	if err != nil {
		return withOp(err, op)
	}
	reply, err := b.run(ctx, b.releaseMarkCmd(idKey, markKey, l.ID, lockKey, ttlMs, record)).Result()
	b.notify.releasedID(l.ID) // its parked waiters (local.go) go to Redis
	if err != nil {
		return mapError(ctx, op, err)
	}
	_, err = b.released(ctx, op, reply)
	return err
}

// releaseMarkCmd is the call of release_mark.lua for lease id on lockKey.
// KEYS: index key, mark key. ARGV: lock id, tombstone ttl ms, nonce, queue
// key start, lock key, mark ttl ms, and the record unless it is nil.
func (b *Backend) releaseMarkCmd(idKey, markKey, id, lockKey string, ttlMs int64, record []byte) scriptCmd {
	if record == nil {
		return releaseMarkScript.cmd(2, idKey, markKey, id, b.tombArg, b.nonce(), b.queueArg, lockKey, ttlMs)
	}
	return releaseMarkScript.cmd(2, idKey, markKey, id, b.tombArg, b.nonce(), b.queueArg, lockKey, ttlMs, record)
}

// AcquireDone implements lock.Recorder: Acquire, unless key carries a
// live done marker (ReleaseDone): then it takes nothing and returns done.
// The look and the acquisition are one script.
func (b *Backend) AcquireDone(ctx context.Context, key string, ttl time.Duration) (lock.Lease, bool, error) {
	l, mark, err := b.acquireMarked(ctx, key, ttl, false)
	return l, mark != nil, err
}

// AcquireRecord implements lock.Recorder: Acquire, unless a record is
// stored for key (ReleaseRecord): then it takes nothing and returns the
// record. The look and the acquisition are one script.
func (b *Backend) AcquireRecord(ctx context.Context, key string, ttl time.Duration) (lock.Lease, []byte, error) {
	return b.acquireMarked(ctx, key, ttl, true)
}

// acquireMarked runs acquire_mark.lua on key: the record (record true) or
// the done marker is returned when there is one, else the lock is taken
// as Acquire takes it.
func (b *Backend) acquireMarked(ctx context.Context, key string, ttl time.Duration, record bool) (lock.Lease, []byte, error) {
	c, err := b.newAcquireCall(ctx, key, "", ttl)
	if err != nil {
		return lock.Lease{}, nil, err
	}
	var markKey string
	if record {
		markKey, err = b.recordKey(c.lockKey)
	} else {
		markKey, err = b.doneKey(c.lockKey)
	}
	if err != nil {
		return lock.Lease{}, nil, withOp(err, "acquire")
	}
	cmd := b.acquireMarkCmd(c, markKey)
	var sent *redis.Cmd
	if b.ack.N > 0 {
		sent = b.runAcquireAcked(ctx, c, cmd)
	} else {
		sent = b.run(ctx, cmd)
	}
	reply, err := b.acquireReply(ctx, c, sent, ttl)
	if err != nil {
		return lock.Lease{}, nil, err
	}
	if t, ok := reply.([]any); ok && len(t) == 2 && t[0] == int64(2) {
		mark, _ := t[1].(string)
		return lock.Lease{}, []byte(mark), nil
	}
	l, err := b.leaseOf(ctx, c, reply, ttl)
	return l, nil, err
}

// acquireMarkCmd is the call of acquire_mark.lua for c: acquire.lua's
// KEYS (no queue) then the mark's key, and acquire.lua's ARGV.
func (b *Backend) acquireMarkCmd(c acquireCall, markKey string) scriptCmd {
	idKey, text := b.indexKey(c.id), wire.JSONText(c.norm)
	if b.stripes > 0 {
		return acquireMarkScript.cmd(4, c.lockKey, idKey, c.fenceKey, markKey, c.id, b.ttlBox(c.ttlMs), text, b.stripedArg)
	}
	return acquireMarkScript.cmd(4, c.lockKey, idKey, c.fenceKey, markKey, c.id, b.ttlBox(c.ttlMs), text)
}

// Record returns the record ReleaseRecord stored for key, if any. A done
// marker is not a record.
func (b *Backend) Record(ctx context.Context, key string) ([]byte, bool, error) {
	const op = "record"
	if err := checkCtx(op, ctx); err != nil {
		return nil, false, err
	}
	_, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return nil, false, err
	}
	recordKey, err := b.recordKey(lockKey)
	if err != nil {
		return nil, false, withOp(err, op)
	}
	// get_record.lua: KEYS the record key.
	s, err := b.run(ctx, getRecordScript.cmd(1, recordKey)).Text()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, mapError(ctx, op, err)
	}
	return []byte(s), true, nil
}

// IsDone reports whether key carries a live done marker (ReleaseDone). A
// record stored by ReleaseRecord is not a done marker.
func (b *Backend) IsDone(ctx context.Context, key string) (bool, error) {
	const op = "is_done"
	if err := checkCtx(op, ctx); err != nil {
		return false, err
	}
	_, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return false, err
	}
	doneKey, err := b.doneKey(lockKey)
	if err != nil {
		return false, withOp(err, op)
	}
	// is_done.lua: KEYS the done-marker key.
	n, err := b.run(ctx, isDoneScript.cmd(1, doneKey)).Int64()
	if err != nil {
		return false, mapError(ctx, op, err)
	}
	return n == 1, nil
}
