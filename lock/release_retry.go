package lock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/syncguard-go/syncguard/lock/internal/cleanup"
)

// A release that failed on a transient error is tried again in the
// background: a lease left behind blocks its key for its whole TTL.

// releaseRetries counts the background retries running, for tests.
var releaseRetries sync.WaitGroup

// retryRelease tries release again in the background, each try bounded
// by timeout, until one is answered or the lease is gone by its TTL (ttl
// after start). ctx gives the tries its values, not its cancellation.
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
// ctx, the release's own context, is worth another try: the store was
// unreachable, slow or busy, or did not answer in time.
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
