package redisbackend

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/lockdriver"
)

// StorageKeys names the Redis keys that hold the state of one lock key.
type StorageKeys struct {
	// Lock is the lock key: the lock JSON while the key is held.
	Lock string
	// Fence is the fence counter the key's grants take their fences from:
	// the key's own, or its stripe's with Options.FenceStripes. It is never
	// deleted.
	Fence string
	// Done is the key of the done marker (ReleaseDone).
	Done string
	// Record is the key of the record stored by ReleaseRecord (replay),
	// apart from the done marker.
	Record string
}

// StorageKeys returns the names of the Redis keys of key in b's layout
// (see Layout), for operator tools that read them directly. It does no
// I/O, and returns a *lock.Error with lock.CodeInvalidArgument for a key
// that no lock can have.
func (b *Backend) StorageKeys(key string) (StorageKeys, error) {
	const op = "keys"
	norm, lockKey, err := b.lockKey(op, key)
	if err != nil {
		return StorageKeys{}, err
	}
	fenceKey, err := b.fenceKey(norm, lockKey)
	if err != nil {
		return StorageKeys{}, withOp(err, op)
	}
	doneKey, err := b.doneKey(lockKey)
	if err != nil {
		return StorageKeys{}, withOp(err, op)
	}
	recordKey, err := b.recordKey(lockKey)
	if err != nil {
		return StorageKeys{}, withOp(err, op)
	}
	return StorageKeys{Lock: lockKey, Fence: fenceKey, Done: doneKey, Record: recordKey}, nil
}

// forceAttempts bounds how often ForceRelease reads the holder again when
// the lease it read was released (or replaced) before its release ran.
const forceAttempts = 5

// ForceRelease releases whatever live lease holds key, without its lock
// id: it reads the holder's id (with LookupKey's read-only script) and
// releases that lease as its holder would (Release), so the lock and its
// index key go, the fence counter stays, and waiters are woken exactly as
// by a normal release. It returns the lease it released, as an Info of
// hashes.
//
// It is for operators (syncguard release --force) freeing a key whose
// holder is stuck. It breaks mutual exclusion for the evicted holder,
// which is not told: until its next Extend or Release (both then fail with
// ErrNotHeld) it may believe it still holds the key while the next holder
// works. Its fence is now stale: a resource that rejects fences lower than
// the highest it has seen refuses its writes, which is what fences are for.
//
// When the holder changes between the read and the release, ForceRelease
// reads again and releases the new holder (a few times at most). It
// returns an error matching lock.ErrNotHeld (a *lockdriver.NotHeldError with
// NotHeldNotFound) when key holds no live lease, and a *lock.Error with
// lock.CodeInternal, deleting nothing, when the lock key holds something
// that is not syncguard lock data or a lease whose index key is gone (which
// no release by id can free). On a key held as a concurrency limit it
// returns an error matching lock.ErrKindMismatch: ForceReleaseSlots frees
// those.
func (b *Backend) ForceRelease(ctx context.Context, key string) (lock.Info, error) {
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
		raw, err := b.run(ctx, lookupKeyScript, append(b.args(lookupKeyScript, 1, 1), lockKey, toleranceArg)).Text()
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

// ForceReleaseSlots is ForceRelease for a concurrency limit (a key whose
// slots are taken with lock.WithLimit): it reads the ids of the live slots
// of key (with LookupLimit's read-only script) and releases each as its
// holder would (Release), so each freed slot goes to the oldest waiter
// whose n admits it, as after any release, and the fence counter stays.
// With fence empty it releases every live slot; otherwise only the slot
// with that fence. It returns the slots it released, as Infos of hashes,
// earliest expiry first.
//
// Each evicted holder is not told, as with ForceRelease: its fence is now
// stale. Slots granted after the read (the hand-offs of these releases
// included) are kept, and so is a slot whose index key is gone (evicted or
// deleted by hand), which no release by id can free.
//
// It returns an error matching lock.ErrNotHeld (a *lockdriver.NotHeldError with
// NotHeldNotFound) when no live slot (with that fence) holds key or every
// one was released meanwhile, and an error matching lock.ErrKindMismatch
// while a live plain lock holds key (use ForceRelease). A release that
// fails otherwise ends the call with the slots released so far and the
// error.
func (b *Backend) ForceReleaseSlots(ctx context.Context, key string, fence lock.Fence) ([]lock.Info, error) {
	const op = "force_release"
	slots, err := b.liveSlots(ctx, op, key)
	if err != nil {
		return nil, err
	}
	var released []lock.Info
	for _, s := range slots {
		if fence != "" && s.info.Fence != fence {
			continue
		}
		err := b.Release(ctx, s.id)
		if errors.Is(err, lock.ErrNotHeld) {
			continue // released or expired since the read
		}
		if err != nil {
			return released, withOp(err, op)
		}
		released = append(released, s.info)
	}
	if len(released) == 0 {
		return nil, &lockdriver.NotHeldError{Reason: lockdriver.NotHeldNotFound}
	}
	return released, nil
}
