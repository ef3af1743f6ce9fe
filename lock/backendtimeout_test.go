package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// TestAcquireBackendTimeout: with WithBackendTimeout, an attempt the
// backend does not answer ends the acquisition with NetworkTimeout after
// the timeout, whatever is left of the wait; a negative timeout is an
// InvalidArgument before any call.
func TestAcquireBackendTimeout(t *testing.T) {
	f := newFake()
	f.setHook(func(ctx context.Context, method string) error {
		<-ctx.Done() // a silent backend: no answer until the caller gives up
		return ctx.Err()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := lock.Acquire(ctx, f, "k", lock.WithWait(4*time.Second), lock.WithBackendTimeout(100*time.Millisecond))
	took := time.Since(start)
	if lock.CodeOf(err) != lock.CodeNetworkTimeout || took > 2*time.Second {
		t.Errorf("Acquire on a silent backend = %v after %v; want NetworkTimeout after about 100ms", err, took)
	}
	if _, err := lock.Acquire(ctx, newFake(), "k", lock.WithBackendTimeout(-time.Second)); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("Acquire with a negative backend timeout = %v, want InvalidArgument", err)
	}
}
