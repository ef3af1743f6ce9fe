package lock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/internal/cleanup"
)

// Releases that failed on a transient error are tried again in the
// background (internal/cleanup): a restart or a stall of the store can
// outlast go-redis's own few retries and the release timeout, and a lease
// left behind blocks its key, or takes one of its limit's slots, for its
// whole TTL.

// releaseRetries counts the background release retries still running, so
// that tests can wait for them.
var releaseRetries sync.WaitGroup

// retryRelease tries release again in the background, each try under a
// context of its own bounded by timeout, with cleanup.Retry's backoff,
// until a try is answered (nil, ErrNotHeld: a try whose reply was lost
// may have released already, and the release scripts are safe to run
// twice; or an error that is not transient) or until the lease is gone by
// its TTL: ttl after start, the moment the heartbeat stopped (it last
// extended the lease, by ttl, before then). ctx gives the tries its
// values, not its cancellation.
func retryRelease(ctx context.Context, release func(context.Context) error, start time.Time, ttl, timeout time.Duration) {
	deadline := start.Add(ttl)
	if !time.Now().Before(deadline) {
		return
	}
	releaseRetries.Add(1)
	go func() {
		defer releaseRetries.Done()
		rctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		again := false // the last try's verdict, for cleanup.Retry
		cleanup.Retry(rctx, func(ctx context.Context) error {
			tctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			err := release(tctx)
			again = retryableRelease(tctx, err)
			return err
		}, func(error) bool { return again })
	}()
}

// retryableRelease reports whether a release that failed with err under
// ctx, a context of the release's own (so never ended by a caller), is
// worth another try: the store was unreachable, slow or busy, or did not
// answer before ctx's deadline. A lease that is not held is gone, so
// there is nothing left to release; bad input, bad credentials and
// internal errors will not change by trying again.
func retryableRelease(ctx context.Context, err error) bool {
	if err == nil || errors.Is(err, ErrNotHeld) {
		return false
	}
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	code := CodeOf(err)
	if code.Transient() {
		return true
	}
	switch code {
	case CodeAborted:
		return timedOut
	case "":
		// A release function's own error, such as a bare
		// context.DeadlineExceeded from a call it made under ctx.
		return timedOut && errors.Is(err, context.DeadlineExceeded)
	}
	return false
}
