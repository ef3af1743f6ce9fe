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

// recorder is the decorator of a lock.Completer that is also a
// lock.Recorder (a record is a done marker with contents): it forwards
// ReleaseRecord, observed like Release, and Record, unobserved. Wrap
// returns one only when the wrapped backend is a lock.Recorder, so a
// type assertion on the result tells what the backend can do.
type recorder struct {
	*completer
	next lock.Recorder
}

var (
	_ lock.Completer = (*completer)(nil)
	_ lock.Recorder  = (*recorder)(nil)
)

// ReleaseDone calls the wrapped backend's ReleaseDone in a
// "syncguard.release" span.
func (w *completer) ReleaseDone(ctx context.Context, l lock.Lease, doneTTL time.Duration) error {
	return w.release(ctx, l.ID, func(ctx context.Context) error { return w.next.ReleaseDone(ctx, l, doneTTL) })
}

// IsDone calls the wrapped backend's IsDone.
func (w *completer) IsDone(ctx context.Context, key string) (bool, error) {
	return w.next.IsDone(ctx, key)
}

// ReleaseRecord calls the wrapped backend's ReleaseRecord in a
// "syncguard.release" span.
func (w *recorder) ReleaseRecord(ctx context.Context, l lock.Lease, record []byte, ttl time.Duration) error {
	return w.release(ctx, l.ID, func(ctx context.Context) error { return w.next.ReleaseRecord(ctx, l, record, ttl) })
}

// Record calls the wrapped backend's Record.
func (w *recorder) Record(ctx context.Context, key string) ([]byte, bool, error) {
	return w.next.Record(ctx, key)
}
