// Package cleanup retries the clean-up calls nobody waits for while the
// server is unreachable: a lock left behind blocks its key for its TTL.
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

// Retry calls f with ctx until f returns nil, an error transient does not
// accept, or ctx ends. The pause between tries grows from First to Max.
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
