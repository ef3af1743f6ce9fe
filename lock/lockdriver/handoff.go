package lockdriver

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// HandedOver is for a release running under ctx that handed the lock (or a
// slot) to a waiter of the key's queue, as a new lease with fence to: the
// release's hooks then see it in lock.Op.HandedTo. It does nothing when
// the release has no hooks.
func HandedOver(ctx context.Context, to lock.Fence) { contract.HandedOver(ctx, string(to)) }
