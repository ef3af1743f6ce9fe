package redisbackend

import (
	"context"
	"errors"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend/internal/operator"
)

// storageKeys is admin.StorageKeys.
func (b *Backend) storageKeys(key string) (operator.Keys, error) {
	const op = "keys"
	norm, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return operator.Keys{}, err
	}
	fenceKey, err := b.fenceKey(norm, lockKey)
	if err != nil {
		return operator.Keys{}, withOp(err, op)
	}
	doneKey, err := b.doneKey(lockKey)
	if err != nil {
		return operator.Keys{}, withOp(err, op)
	}
	recordKey, err := b.recordKey(lockKey)
	if err != nil {
		return operator.Keys{}, withOp(err, op)
	}
	return operator.Keys{Lock: lockKey, Fence: fenceKey, Done: doneKey, Record: recordKey}, nil
}

// forceAttempts bounds how often forceRelease reads the holder again when
// the lease it read was released (or replaced) before its release ran.
const forceAttempts = 5

// forceRelease is admin.ForceRelease.
func (b *Backend) forceRelease(ctx context.Context, key string) (lock.Info, error) {
	const op = "force_release"
	if err := checkCtx(op, ctx); err != nil {
		return lock.Info{}, err
	}
	_, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return lock.Info{}, err
	}
	var lastErr error
	prev := ""
	for range forceAttempts {
		raw, err := b.run(ctx, lookupKeyCmd(lockKey)).Text()
		if errors.Is(err, redis.Nil) {
			return lock.Info{}, &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}
		}
		if err != nil {
			return lock.Info{}, mapError(ctx, op, err)
		}
		d, err := decodeLockData(raw)
		if err != nil {
			return lock.Info{}, withOp(err, op)
		}
		if d.LockID == prev {
			// The same lease again after its release found nothing: its
			// index key is gone (evicted, or deleted by hand), so no
			// release by id can free it.
			return lock.Info{}, internal(op, "the lock has no index key (evicted or deleted?), so it cannot be released by its id; delete the lock key by hand")
		}
		prev = d.LockID
		err = b.Release(ctx, d.LockID)
		if err == nil {
			return lock.Info{
				KeyHash:    lockdriver.HashKey(d.Key),
				IDHash:     lockdriver.HashKey(d.LockID),
				Fence:      d.Fence,
				AcquiredAt: msTime(d.AcquiredAtMs),
				ExpiresAt:  msTime(d.ExpiresAtMs),
			}, nil
		}
		if !errors.Is(err, lock.ErrNotHeld) {
			return lock.Info{}, withOp(err, op)
		}
		lastErr = err // released or replaced meanwhile: read the holder again
	}
	return lock.Info{}, withOp(lastErr, op)
}

// forceReleaseSlots is admin.ForceReleaseSlots.
func (b *Backend) forceReleaseSlots(ctx context.Context, key string, fence lock.Fence) ([]lock.Info, error) {
	const op = "force_release"
	slots, err := b.liveSlots(ctx, op, key)
	if err != nil {
		return nil, err
	}
	done, err := b.releaseEach(ctx, op, len(slots), func(i int) (string, bool) {
		return slots[i].id, fence == "" || slots[i].info.Fence == fence
	})
	var released []lock.Info
	for _, i := range done {
		released = append(released, slots[i].info)
	}
	return released, err
}

// forceReleaseRW is admin.ForceReleaseRW.
func (b *Backend) forceReleaseRW(ctx context.Context, key string, fences []lock.Fence) (*rwlock.Info, error) {
	const op = "force_release"
	hs, err := b.liveRWHolders(ctx, op, key)
	if err != nil {
		return nil, err
	}
	done, err := b.releaseEach(ctx, op, len(hs), func(i int) (string, bool) {
		return hs[i].id, len(fences) == 0 || slices.Contains(fences, hs[i].info.Fence)
	})
	released := make([]rwHolder, len(done))
	for j, i := range done {
		released[j] = hs[i]
	}
	return rwInfo(released), err
}

// releaseEach releases, of n leases, those that pick keeps (pick returns
// the i-th's lock id and whether to release it), skipping those released
// or expired since they were read, and returns the indexes of those it
// released. It stops at the first other failure; it returns an error
// matching lock.ErrNotHeld when it released none.
func (b *Backend) releaseEach(ctx context.Context, op string, n int, pick func(i int) (string, bool)) ([]int, error) {
	var released []int
	for i := range n {
		id, ok := pick(i)
		if !ok {
			continue
		}
		err := b.Release(ctx, id)
		if errors.Is(err, lock.ErrNotHeld) {
			continue // released or expired since the read
		}
		if err != nil {
			return released, withOp(err, op)
		}
		released = append(released, i)
	}
	if len(released) == 0 {
		return nil, &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}
	}
	return released, nil
}
