package lockdriver

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// HandedOver tells the hooks of the release running under ctx that it
// handed the lock to a waiter, as a lease with fence to.
func HandedOver(ctx context.Context, to lock.Fence) { contract.HandedOver(ctx, string(to)) }
