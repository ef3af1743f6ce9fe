package redisbackend_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestCleanupThroughLoading: a lock is left behind by a caller that is gone
// while Redis is killed (-9, AOF with fsync on every write, so the lock
// survives), and is released in the background; that release must get
// through the restart, which answers -LOADING for about two seconds (2000
// keys loaded 1 ms apart). Once Redis serves again the key must be free
// within about a second, not at the end of its 30 s TTL. Every background
// clean-up is covered: an attempt whose reply is lost as Redis dies, given
// up by a queued waiter (lock.Acquire with a wait: the waiter leaves), by
// lock.Acquire without a wait (it releases the orphaned id) and by a plain
// Backend.Acquire (it releases the abandoned id); and a lock.Do whose
// release fails as Redis dies (the release is retried).
func TestCleanupThroughLoading(t *testing.T) {
	t.Parallel()
	tests := []struct {
		desc string
		// leave leaves k locked with its caller gone, killing Redis (crash)
		// on the way.
		leave func(t *testing.T, ctx context.Context, b *redisbackend.Backend, loser *redistest.ReplyLoser, crash func())
	}{
		{"queued waiter leaves", lostReply(func(ctx context.Context, b *redisbackend.Backend) error {
			_, err := lock.Acquire(ctx, b, "k", lock.WithTTL(30*time.Second), lock.WithWait(time.Second))
			return err
		})},
		{"lock.Acquire without a wait", lostReply(func(ctx context.Context, b *redisbackend.Backend) error {
			_, err := lock.Acquire(ctx, b, "k", lock.WithTTL(30*time.Second), lock.WithWait(0))
			return err
		})},
		{"abandoned acquire", lostReply(func(ctx context.Context, b *redisbackend.Backend) error {
			_, err := b.Acquire(ctx, "k", 30*time.Second)
			return err
		})},
		{"lock.Do release fails", releaseFails},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			cleanupThroughLoading(t, tc.leave)
		})
	}
}

func cleanupThroughLoading(t *testing.T, leave func(*testing.T, context.Context, *redisbackend.Backend, *redistest.ReplyLoser, func())) {
	srv := redistest.Start(t, redistest.WithAOF(), redistest.WithSlowLoad(time.Millisecond))
	srv.Pad(t, 2000)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	rdb := srv.Client(t)
	loser, loading := &redistest.ReplyLoser{}, &redistest.LoadingReplies{}
	rdb.AddHook(loser)
	rdb.AddHook(loading)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := b.Acquire(ctx, "warm", time.Second); err != nil { // loads the scripts
		t.Fatal(err)
	}

	raw := srv.Client(t)
	leave(t, ctx, b, loser, func() {
		if n, err := raw.Exists(ctx, prefix+":k").Result(); err != nil || n != 1 {
			t.Errorf("EXISTS k = %d, %v before Redis dies, want the lock taken", n, err)
		}
		srv.Kill(t)
	})
	srv.Restart(t) // returns once the data is loaded and PING answers
	serving := time.Now()
	waitFor(t, 2*time.Second, func() string {
		if n, err := raw.Exists(ctx, prefix+":k").Result(); err != nil || n != 0 {
			return "k still locked 2 s after Redis served again: the background release gave up on LOADING"
		}
		return ""
	})
	t.Logf("k free %v after Redis served again (%d -LOADING replies before)", time.Since(serving).Round(10*time.Millisecond), loading.Count())
	if loading.Count() == 0 {
		t.Error("the clean-up met no -LOADING reply: the restart loaded too fast for this test")
	}
}

// lostReply leaves k locked by an attempt (acquire) whose reply is lost as
// Redis dies: the script ran, and the caller gets the outage's error.
func lostReply(acquire func(context.Context, *redisbackend.Backend) error) func(*testing.T, context.Context, *redisbackend.Backend, *redistest.ReplyLoser, func()) {
	return func(t *testing.T, ctx context.Context, b *redisbackend.Backend, loser *redistest.ReplyLoser, crash func()) {
		t.Helper()
		loser.Arm(crash)
		if err := acquire(ctx, b); !lock.CodeOf(err).Transient() {
			t.Fatalf("acquire = %v, want the outage's transient error", err)
		}
		if loser.Lost() != 1 {
			t.Fatalf("%d replies lost, want 1", loser.Lost())
		}
	}
}

// releaseFails leaves k locked by a lock.Do whose function returns as
// Redis dies: its release fails, and goes to the release error handler.
func releaseFails(t *testing.T, ctx context.Context, b *redisbackend.Backend, _ *redistest.ReplyLoser, crash func()) {
	t.Helper()
	var mu sync.Mutex
	var failures []error
	err := lock.Do(ctx, b, "k", func(context.Context, lock.Lease) error {
		crash()
		return nil
	}, lock.WithTTL(30*time.Second), lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, err)
	}))
	if err != nil {
		t.Fatalf("lock.Do = %v, want nil (a failed release goes to the handler)", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(failures) != 1 || !lock.CodeOf(failures[0]).Transient() {
		t.Fatalf("release error handler heard %v, want one transient failure", failures)
	}
}
