package redisbackend

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
)

// Script arguments that never change, boxed once so a call does not
// allocate to pass them.
var (
	toleranceArg any = strconv.FormatInt(lock.TimeToleranceMs, 10)
	fenceMaxArg  any = string(lock.FenceMax)
)

// Acquire takes the lock on key for ttl, once. On contention it returns a
// *lock.LockedError (matching lock.ErrLocked) carrying the holder's expiry.
// A fence counter past lock.FenceMax fails with lock.CodeInternal and
// leaves no lock behind.
func (b *Backend) Acquire(ctx context.Context, key string, ttl time.Duration) (lock.Lease, error) {
	const op = "acquire"
	if err := checkCtx(op, ctx); err != nil {
		return lock.Lease{}, err
	}
	norm, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return lock.Lease{}, err
	}
	ttlMs, err := validTTL(op, ttl)
	if err != nil {
		return lock.Lease{}, err
	}
	fenceKey, err := b.fenceKey(lockKey)
	if err != nil {
		return lock.Lease{}, withOp(err, op)
	}
	id := b.newLockID(lockKey)
	args := append(acquireScript.args(3, 5), lockKey, b.indexKey(id), fenceKey,
		id, ttlMs, toleranceArg, norm, fenceMaxArg)
	res, err := b.runAcquire(ctx, args).Slice()
	if err != nil {
		return lock.Lease{}, mapError(ctx, op, err)
	}
	if len(res) < 2 {
		return lock.Lease{}, internal(op, "unexpected reply from the acquire script")
	}
	status, _ := res[0].(int64)
	switch status {
	case 1:
	case 0:
		exp, _ := res[1].(int64)
		le := &lock.LockedError{}
		if exp > 0 {
			le.ExpiresAt = msTime(exp)
		}
		return lock.Lease{}, le
	case -3:
		return lock.Lease{}, internal(op, "fence counter exceeded "+string(lock.FenceMax)+"; rotate to a new key (no lock was taken)")
	default:
		return lock.Lease{}, internal(op, "unexpected status from the acquire script")
	}
	fenceStr, _ := res[1].(string)
	var exp int64
	if len(res) > 2 {
		exp, _ = res[2].(int64)
	}
	fence, warn, err := lock.CheckFence(fenceStr)
	if err != nil || exp <= 0 {
		// Do not leave a lock we cannot describe.
		_ = b.release(context.WithoutCancel(ctx), b.indexKey(id), id).Err()
		if err == nil {
			err = internal(op, "unexpected expiry from the acquire script")
		}
		return lock.Lease{}, err
	}
	if warn {
		b.log.Warn("syncguard: fence counter past the warning threshold; plan a key rotation",
			"key_hash", lock.HashKey(norm), "fence", fenceStr, "threshold", string(lock.FenceWarn))
	}
	return lock.Lease{Key: norm, ID: id, Fence: fence, TTL: ttl, ExpiresAt: msTime(exp)}, nil
}

// Release frees the lease id. It returns a *lock.NotHeldError (matching
// lock.ErrNotHeld) when the lease is gone, expired or not the owner of
// its key; nothing is deleted then.
func (b *Backend) Release(ctx context.Context, id string) error {
	const op = "release"
	if err := checkCtx(op, ctx); err != nil {
		return err
	}
	idKey, err := b.idKey(op, id)
	if err != nil {
		return err
	}
	n, err := b.release(ctx, idKey, id).Int64()
	if err != nil {
		return mapError(ctx, op, err)
	}
	if n == 1 {
		return nil
	}
	return notHeld(op, n)
}

// release runs the release script for lease id (idKey its index key).
func (b *Backend) release(ctx context.Context, idKey, id string) *redis.Cmd {
	return b.run(ctx, releaseScript, append(releaseScript.args(1, 3), idKey, id, toleranceArg, b.channelArg))
}

// Extend sets the lease id to expire ttl from now by the server's clock
// and returns the new expiry. It returns a *lock.NotHeldError like
// Release.
func (b *Backend) Extend(ctx context.Context, id string, ttl time.Duration) (time.Time, error) {
	const op = "extend"
	if err := checkCtx(op, ctx); err != nil {
		return time.Time{}, err
	}
	idKey, err := b.idKey(op, id)
	if err != nil {
		return time.Time{}, err
	}
	ttlMs, err := validTTL(op, ttl)
	if err != nil {
		return time.Time{}, err
	}
	v, err := b.run(ctx, extendScript, append(extendScript.args(1, 3), idKey, id, toleranceArg, ttlMs)).Result()
	return extendReply(ctx, op, v, err)
}

func notHeld(op string, code int64) error {
	switch code {
	case 0:
		return &lock.NotHeldError{Reason: lock.NotHeldNotOwner}
	case -1:
		return &lock.NotHeldError{Reason: lock.NotHeldNotFound}
	case -2:
		return &lock.NotHeldError{Reason: lock.NotHeldExpired}
	}
	return internal(op, "unexpected status "+strconv.FormatInt(code, 10)+" from the script")
}

// IsLocked reports whether key is held by a live lease. It only reads,
// unless Options.CleanupInIsLocked is set.
func (b *Backend) IsLocked(ctx context.Context, key string) (bool, error) {
	const op = "is_locked"
	if err := checkCtx(op, ctx); err != nil {
		return false, err
	}
	_, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return false, err
	}
	cleanup := "0"
	if b.cleanup {
		cleanup = "1"
	}
	n, err := b.run(ctx, isLockedScript, append(isLockedScript.args(1, 3), lockKey, toleranceArg, cleanup, b.indexPrefix(lockKey))).Int64()
	if err != nil {
		return false, mapError(ctx, op, err)
	}
	return n == 1, nil
}

// LookupKey describes the live lease on key, or returns nil, nil when the
// key is free or expired. The Info holds hashes, never the raw key or id.
func (b *Backend) LookupKey(ctx context.Context, key string) (*lock.Info, error) {
	const op = "lookup"
	if err := checkCtx(op, ctx); err != nil {
		return nil, err
	}
	_, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return nil, err
	}
	return b.lookup(ctx, op, lookupKeyScript, append(lookupKeyScript.args(1, 1), lockKey, toleranceArg))
}

// LookupID describes the live lease with this id, or returns nil, nil.
func (b *Backend) LookupID(ctx context.Context, id string) (*lock.Info, error) {
	const op = "lookup"
	if err := checkCtx(op, ctx); err != nil {
		return nil, err
	}
	idKey, err := b.idKey(op, id)
	if err != nil {
		return nil, err
	}
	return b.lookup(ctx, op, lookupIDScript, append(lookupIDScript.args(1, 2), idKey, id, toleranceArg))
}

func (b *Backend) lookup(ctx context.Context, op string, s *script, args []any) (*lock.Info, error) {
	raw, err := b.run(ctx, s, args).Text()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, mapError(ctx, op, err)
	}
	d, err := decodeLockData(raw)
	if err != nil {
		return nil, withOp(err, op)
	}
	return &lock.Info{
		KeyHash:    lock.HashKey(d.Key),
		IDHash:     lock.HashKey(d.LockID),
		Fence:      d.Fence,
		AcquiredAt: msTime(d.AcquiredAtMs),
		ExpiresAt:  msTime(d.ExpiresAtMs),
	}, nil
}

// lockData is the JSON stored at a lock key.
type lockData struct {
	LockID       string
	ExpiresAtMs  int64
	AcquiredAtMs int64
	Key          string
	Fence        lock.Fence
}

// decodeLockData parses lock JSON strictly: every field present with its
// type, a well-formed lock id and fence, integral millisecond times.
func decodeLockData(raw string) (lockData, error) {
	var w struct {
		LockID       *string  `json:"lockId"`
		ExpiresAtMs  *float64 `json:"expiresAtMs"`
		AcquiredAtMs *float64 `json:"acquiredAtMs"`
		Key          *string  `json:"key"`
		Fence        *string  `json:"fence"`
	}
	bad := func(what string) (lockData, error) {
		return lockData{}, internal("decode", "corrupt lock data: "+what)
	}
	if err := json.Unmarshal([]byte(raw), &w); err != nil {
		return bad("not JSON of the expected shape")
	}
	if w.LockID == nil || w.ExpiresAtMs == nil || w.AcquiredAtMs == nil || w.Key == nil || w.Fence == nil {
		return bad("missing field")
	}
	if lock.ValidateLockID(*w.LockID) != nil {
		return bad("malformed lockId")
	}
	fence, err := lock.ParseFence(*w.Fence)
	if err != nil {
		return bad("malformed fence")
	}
	exp, ok1 := msInt(*w.ExpiresAtMs)
	acq, ok2 := msInt(*w.AcquiredAtMs)
	if !ok1 || !ok2 {
		return bad("times out of range")
	}
	return lockData{LockID: *w.LockID, ExpiresAtMs: exp, AcquiredAtMs: acq, Key: *w.Key, Fence: fence}, nil
}

// msInt converts a JSON number of milliseconds to int64 when it is a
// whole number within ±2^53.
func msInt(f float64) (int64, bool) {
	const limit = 1 << 53
	if f != f || f < -limit || f > limit || f != float64(int64(f)) {
		return 0, false
	}
	return int64(f), true
}
