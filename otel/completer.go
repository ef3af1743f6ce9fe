package otellock

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/syncguard-go/syncguard/lock"
)

// completer is the decorator of a backend that also implements
// lock.Completer (job deduplication with done markers): it forwards
// ReleaseDone, observed like Release, and IsDone, in a
// "syncguard.is_done" span.
type completer struct {
	*backend
	next lock.Completer
}

// recorder is the decorator of a lock.Completer that is also a
// lock.Recorder: it forwards ReleaseRecord, observed like Release, and
// Record, in a "syncguard.record" span. Wrap
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

// IsDone calls the wrapped backend's IsDone in a "syncguard.is_done"
// span, whose outcome is "found" for a live done marker, else
// "not_found".
func (w *completer) IsDone(ctx context.Context, key string) (bool, error) {
	if ctx == nil {
		return w.next.IsDone(ctx, key)
	}
	ctx, c := w.begin(ctx, opIsDone)
	done, err := w.next.IsDone(ctx, key)
	w.endKeyed(ctx, c, key, done, err)
	return done, err
}

// ReleaseRecord calls the wrapped backend's ReleaseRecord in a
// "syncguard.release" span.
func (w *recorder) ReleaseRecord(ctx context.Context, l lock.Lease, record []byte, ttl time.Duration) error {
	return w.release(ctx, l.ID, func(ctx context.Context) error { return w.next.ReleaseRecord(ctx, l, record, ttl) })
}

// Record calls the wrapped backend's Record in a "syncguard.record"
// span, whose outcome is "found" when a record is stored, else
// "not_found".
func (w *recorder) Record(ctx context.Context, key string) ([]byte, bool, error) {
	if ctx == nil {
		return w.next.Record(ctx, key)
	}
	ctx, c := w.begin(ctx, opRecord)
	rec, ok, err := w.next.Record(ctx, key)
	w.endKeyed(ctx, c, key, ok, err)
	return rec, ok, err
}

// endKeyed ends the span and measurement c of a read of key's done marker
// or record, which found one or not.
func (w *backend) endKeyed(ctx context.Context, c call, key string, found bool, err error) {
	var attrs []attribute.KeyValue
	if c.span != nil {
		attrs = keyAttrs(make([]attribute.KeyValue, 0, 4), key, w.rawKeys)
	}
	out := outNotFound
	if found {
		out = outFound
	}
	w.end(ctx, c, out, err, attrs)
}
