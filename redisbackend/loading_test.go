package redisbackend_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// TestCleanupThroughLoading: an attempt takes the lock, but its reply is
// lost as Redis goes down, so the caller gives up and the lock id is
// released in the background; that release must get through the restart,
// which answers -LOADING for about two seconds (2000 keys loaded 1 ms
// apart). Once Redis serves again the key must be free within about a
// second, not at the end of its 30 s TTL. Both background clean-ups are
// covered: a queued waiter leaving (lock.Acquire with a wait) and a plain
// Backend.Acquire abandoning its attempt.
func TestCleanupThroughLoading(t *testing.T) {
	tests := []struct {
		desc    string
		acquire func(ctx context.Context, b *redisbackend.Backend) error
	}{
		{"queued waiter leaves", func(ctx context.Context, b *redisbackend.Backend) error {
			_, err := lock.Acquire(ctx, b, "k", lock.WithTTL(30*time.Second), lock.WithWait(time.Second))
			return err
		}},
		{"abandoned acquire", func(ctx context.Context, b *redisbackend.Backend) error {
			_, err := b.Acquire(ctx, "k", 30*time.Second)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.desc, func(t *testing.T) {
			t.Parallel()
			cleanupThroughLoading(t, tc.acquire)
		})
	}
}

func cleanupThroughLoading(t *testing.T, acquire func(context.Context, *redisbackend.Backend) error) {
	srv := redistest.Start(t, redistest.WithAOF(), redistest.WithSlowLoad(time.Millisecond))
	srv.Pad(t, 2000)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	rdb := srv.Client(t)
	loser := &redistest.ReplyLoser{}
	rdb.AddHook(loser)
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := b.Acquire(ctx, "warm", time.Second); err != nil { // loads the scripts
		t.Fatal(err)
	}

	raw := srv.Client(t)
	loser.Arm(func() {
		if n, err := raw.Exists(ctx, prefix+":k").Result(); err != nil || n != 1 {
			t.Errorf("EXISTS k = %d, %v: the attempt whose reply is lost should have taken the lock", n, err)
		}
		srv.Stop(t)
	})
	if err := acquire(ctx, b); !lock.CodeOf(err).Transient() {
		t.Fatalf("acquire = %v, want the outage's transient error", err)
	}
	if loser.Lost() != 1 {
		t.Fatalf("%d replies lost, want 1", loser.Lost())
	}
	srv.Restart(t) // returns once the data is loaded and PING answers
	serving := time.Now()
	waitFor(t, 2*time.Second, func() string {
		if n, err := raw.Exists(ctx, prefix+":k").Result(); err != nil || n != 0 {
			return "k still locked 2 s after Redis served again: the background release gave up on LOADING"
		}
		return ""
	})
	t.Logf("k free %v after Redis served again", time.Since(serving).Round(10*time.Millisecond))
}
