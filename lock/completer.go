package lock

import (
	"context"
	"time"
)

// Completer is an optional Backend interface for work that must run at
// most once per window, such as deduplicated jobs: the release that ends
// a successful run also leaves a done marker on the key, in the same
// atomic step, so no duplicate can acquire the key between the release
// and the marker.
//
// A caller that acquires the key checks IsDone while holding the lease:
// a marker written by an earlier run is then always visible.
type Completer interface {
	// ReleaseDone releases lease l and marks l.Key done for doneTTL. It
	// returns an error matching ErrNotHeld, and writes no marker, when the
	// lease is not held.
	ReleaseDone(ctx context.Context, l Lease, doneTTL time.Duration) error
	// IsDone reports whether key carries a live done marker.
	IsDone(ctx context.Context, key string) (bool, error)
}
