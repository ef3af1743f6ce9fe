package redisbackend

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/wire"
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
	cleanup := "0"
	if b.cleanup {
		cleanup = "1"
	}
	n, err := b.run(ctx, isLockedScript, append(b.args(isLockedScript, 1, 3), lockKey, toleranceArg, cleanup, b.indexPrefix(lockKey))).Int64()
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
	return b.lookup(ctx, op, lookupKeyScript, append(b.args(lookupKeyScript, 1, 1), lockKey, toleranceArg))
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
	return b.lookup(ctx, op, lookupIDScript, append(b.args(lookupIDScript, 1, 2), idKey, id, toleranceArg))
}

// lookup runs a lookup script (args from s.args) and turns the lock data it
// returns into an Info of hashes; no reply (redis.Nil) is nil, nil.
func (b *Backend) lookup(ctx context.Context, op string, s *script, args []any) (*lock.Info, error) {
	d, err := b.lookupData(ctx, op, s, args)
	if d == nil {
		return nil, err
	}
	return infoOf(d), nil
}

// lookupData runs a lookup script and decodes the lock data it returns;
// no reply (redis.Nil) is nil, nil.
func (b *Backend) lookupData(ctx context.Context, op string, s *script, args []any) (*wire.LockData, error) {
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
	return &d, nil
}

// infoOf describes lock data with hashes for its key and lock id.
func infoOf(d *wire.LockData) *lock.Info {
	return &lock.Info{
		KeyHash:    lockdriver.HashKey(d.Key),
		IDHash:     lockdriver.HashKey(d.LockID),
		Fence:      d.Fence,
		AcquiredAt: msTime(d.AcquiredAtMs),
		ExpiresAt:  msTime(d.ExpiresAtMs),
	}
}
