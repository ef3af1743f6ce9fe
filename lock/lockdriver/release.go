package lockdriver

import (
	"context"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/internal/cleanup"
	"github.com/syncguard-go/syncguard/lock/internal/contract"
)

// HandedOver tells the hooks of the release running under ctx that it
// handed the lock to a waiter, as a lease with fence to.
func HandedOver(ctx context.Context, to lock.Fence) { contract.HandedOver(ctx, string(to)) }

// RetryCleanup calls f, a clean-up call nobody waits for, until it returns
// nil, an error transient does not accept, or ctx ends. Pauses grow from
// 50 ms to 1 s.
func RetryCleanup(ctx context.Context, f func(context.Context) error, transient func(error) bool) {
	cleanup.Retry(ctx, f, transient)
}
