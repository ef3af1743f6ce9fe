package otellock

import (
	"context"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// completer is the decorator of a backend that also implements
// lock.Completer (job deduplication with done markers): it forwards
// ReleaseDone, observed like Release, and IsDone, unobserved.
type completer struct {
	*backend
	next lock.Completer
}

var _ lock.Completer = (*completer)(nil)

// ReleaseDone calls the wrapped backend's ReleaseDone in a
// "syncguard.release" span.
func (w *completer) ReleaseDone(ctx context.Context, l lock.Lease, doneTTL time.Duration) error {
	return w.release(ctx, l.ID, func(ctx context.Context) error { return w.next.ReleaseDone(ctx, l, doneTTL) })
}

// IsDone calls the wrapped backend's IsDone.
func (w *completer) IsDone(ctx context.Context, key string) (bool, error) {
	return w.next.IsDone(ctx, key)
}
