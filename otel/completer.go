package otellock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// completer is the decorator of a backend that also implements
// lock.Completer (job deduplication with done markers): it forwards
// ReleaseDone, observed like Release, and IsDone, unobserved. It also
// implements lock.Recorder (a record is a done marker with contents):
// ReleaseRecord, observed like Release, and Record, unobserved, forward to
// the wrapped backend when it is a lock.Recorder and otherwise return an
// error matching errors.ErrUnsupported.
type completer struct {
	*backend
	next lock.Completer
}

var (
	_ lock.Completer = (*completer)(nil)
	_ lock.Recorder  = (*completer)(nil)
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

// errNoRecords is returned by ReleaseRecord and Record when the wrapped
// backend is not a lock.Recorder.
var errNoRecords = fmt.Errorf("otellock: the wrapped backend does not store records: %w", errors.ErrUnsupported)

// ReleaseRecord calls the wrapped backend's ReleaseRecord in a
// "syncguard.release" span.
func (w *completer) ReleaseRecord(ctx context.Context, l lock.Lease, record []byte, ttl time.Duration) error {
	r, ok := w.next.(lock.Recorder)
	if !ok {
		return errNoRecords
	}
	return w.release(ctx, l.ID, func(ctx context.Context) error { return r.ReleaseRecord(ctx, l, record, ttl) })
}

// Record calls the wrapped backend's Record.
func (w *completer) Record(ctx context.Context, key string) ([]byte, bool, error) {
	r, ok := w.next.(lock.Recorder)
	if !ok {
		return nil, false, errNoRecords
	}
	return r.Record(ctx, key)
}
