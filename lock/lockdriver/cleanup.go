package lockdriver

import (
	"context"

	"github.com/syncguard-go/syncguard/lock/internal/cleanup"
)

// RetryCleanup calls f, a clean-up call nobody waits for (the release of
// an abandoned lock id), until it returns nil, an error transient does not
// accept, or ctx ends. The pause between tries grows from 50 ms to 1 s:
// a lock left behind blocks its key until its TTL ends.
func RetryCleanup(ctx context.Context, f func(context.Context) error, transient func(error) bool) {
	cleanup.Retry(ctx, f, transient)
}
