// Package cleanup runs the clean-up calls that nobody waits for: the
// release of a lock id whose acquisition had no reply (it may have taken
// the lock), or of a waiter that left its queue. Such a call is made once
// the caller has gone, on a context of its own, and must not give up while
// the server is merely unreachable: go-redis stops after its own few
// retries (about 12 s with its defaults), which a stall or a restart can
// outlast, and a lock left behind would then block its key for the
// lease's whole TTL.
package cleanup

import (
	"context"
	"time"
)

// Backoff between two tries of Retry: from First, doubling up to Max.
const (
	First = 50 * time.Millisecond
	Max   = time.Second
)

// Retry calls f until it returns an error that transient does not accept
// (nil included) or ctx ends, sleeping between tries (First, doubling up
// to Max); f gets ctx.
func Retry(ctx context.Context, f func(context.Context) error, transient func(error) bool) {
	wait := First
	for {
		err := f(ctx)
		if err == nil || !transient(err) || ctx.Err() != nil {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, Max)
	}
}
