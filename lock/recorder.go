package lock

import (
	"context"
	"time"
)

// Recorder is an optional Backend interface for work whose result is
// replayed to duplicates, such as idempotent HTTP requests: the release
// that ends a successful run also stores a record of its result (an
// encoded response) for the key, in the same atomic step, so no duplicate
// can acquire the key between the release and the record.
//
// A Recorder keeps its records apart from the done markers of a
// [Completer], even when one backend is both: IsDone does not report a
// record, and Record does not return a done marker, so replayed requests
// and deduplicated jobs can share a key space. A caller that acquires the
// key reads the record while holding the lease: a record written by an
// earlier run is then always visible.
type Recorder interface {
	// ReleaseRecord releases lease l and stores record for l.Key for ttl.
	// It returns an error matching ErrNotHeld, and stores nothing, when
	// the lease is not held.
	ReleaseRecord(ctx context.Context, l Lease, record []byte, ttl time.Duration) error
	// Record returns the record stored for key; ok is false when there is
	// none (never written, or expired).
	Record(ctx context.Context, key string) (record []byte, ok bool, err error)
}
