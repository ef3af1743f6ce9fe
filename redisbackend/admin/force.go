package admin

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// Keys names the Redis keys that hold the state of one lock key.
type Keys struct {
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

// StorageKeys returns the names of the Redis keys of key in b's layout. It
// does no I/O. It returns lock.CodeInvalidArgument for a key no lock can
// have.
func StorageKeys(b *redisbackend.Backend, key string) (Keys, error) {
	k, err := b.Operator().StorageKeys(key)
	return Keys(k), err
}

// ForceRelease releases whatever live lease holds key, as its holder
// would, and returns it. It is for operators freeing a key whose holder is
// stuck. The evicted holder is not told, and its fence is now stale. It
// returns an error matching lock.ErrNotHeld when no lease is live,
// lock.ErrKindMismatch on a limit's key, and lock.CodeInternal, deleting
// nothing, for data that is not syncguard's.
func ForceRelease(ctx context.Context, b *redisbackend.Backend, key string) (lock.Info, error) {
	return b.Operator().ForceRelease(ctx, key)
}

// ForceReleaseSlots is ForceRelease for a concurrency limit's key. It
// releases every live slot, or only the one with fence when fence is set,
// and returns them, earliest expiry first. It returns an error matching
// lock.ErrNotHeld when no such slot is live, lock.ErrKindMismatch on a
// lock's key, and on another failure the slots released so far.
func ForceReleaseSlots(ctx context.Context, b *redisbackend.Backend, key string, fence lock.Fence) ([]lock.Info, error) {
	return b.Operator().ForceReleaseSlots(ctx, key, fence)
}

// ForceReleaseRW is ForceRelease for a read-write lock's key (package
// lock/rwlock). It releases the live holders with the given fences, or
// every live holder (the writer, or all the readers) when none is given,
// and returns those it released. A holder released or expired since it
// was read is skipped. It returns an error matching lock.ErrNotHeld when
// it released none, lock.ErrKindMismatch on a lock's or a limit's key, and
// on another failure the holders released so far.
func ForceReleaseRW(ctx context.Context, b *redisbackend.Backend, key string, fences ...lock.Fence) (*rwlock.Info, error) {
	return b.Operator().ForceReleaseRW(ctx, key, fences)
}
