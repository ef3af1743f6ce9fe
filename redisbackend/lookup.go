package redisbackend

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

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
	n, err := b.run(ctx, b.isLockedCmd(lockKey)).Int64()
	if err != nil {
		return false, mapError(ctx, op, err)
	}
	return n == 1, nil
}

// isLockedCmd is the call of is_locked.lua for lockKey: KEYS lock key;
// ARGV "1" to delete an expired lock (Options.CleanupInIsLocked) else "0",
// the index key prefix of the lock's ids.
func (b *Backend) isLockedCmd(lockKey string) scriptCmd {
	return isLockedScript.cmd(1, lockKey, boolArg(b.cleanup), b.indexPrefix(lockKey))
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
	return b.lookup(ctx, op, lookupKeyCmd(lockKey))
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
	return b.lookup(ctx, op, lookupIDCmd(idKey, id))
}

// lookupKeyCmd is the call of lookup_key.lua: KEYS lock key.
func lookupKeyCmd(lockKey string) scriptCmd { return lookupKeyScript.cmd(1, lockKey) }

// lookupIDCmd is the call of lookup_id.lua: KEYS index key; ARGV lock id.
func lookupIDCmd(idKey, id string) scriptCmd { return lookupIDScript.cmd(1, idKey, id) }

// lookup runs c, a lookup script's call, and turns the lock data it
// returns into an Info of hashes; no reply (redis.Nil) is nil, nil.
func (b *Backend) lookup(ctx context.Context, op string, c scriptCmd) (*lock.Info, error) {
	raw, err := b.run(ctx, c).Text()
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
		KeyHash:    lockdriver.HashKey(d.Key),
		IDHash:     lockdriver.HashKey(d.LockID),
		Fence:      d.Fence,
		AcquiredAt: msTime(d.AcquiredAtMs),
		ExpiresAt:  msTime(d.ExpiresAtMs),
	}, nil
}
