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
