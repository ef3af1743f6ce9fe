package redisbackend_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestReleaseRetryAfterRestart: a lease released while Redis restarts (AOF
// on, so the lease survives the restart) fails to release, and is free
// again within about a second of Redis answering, not at its TTL: the
// release is tried again in the background. A slot of a
// limit and a plain lock alike, with go-redis's default client options.
func TestReleaseRetryAfterRestart(t *testing.T) {
	t.Parallel() // its own redis-server; mostly waiting on it
	tests := []struct {
		desc  string
		key   string
		other string // the key of a lease that must survive the restart
		opts  []lock.Option
	}{
		// Two slots of two: the one released during the restart is the
		// limit's only free capacity afterwards.
		{"slot of a limit", "exports", "exports", []lock.Option{lock.WithLimit(2)}},
		{"lock", "k", "witness", nil},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			srv := redistest.Start(t, redistest.WithAOF())
			b, err := redisbackend.New(srv.Client(t), &redisbackend.Options{Prefix: redistest.Prefix(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = b.Close() })
			ctx := context.Background()
			var mu sync.Mutex
			var failures []error
			opts := append([]lock.Option{
				lock.WithTTL(time.Minute), // far past the test: only a release frees the key
				lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) {
					mu.Lock()
					defer mu.Unlock()
					failures = append(failures, err)
				}),
			}, tt.opts...)
			_, l, release, err := lock.Hold(ctx, b, tt.key, opts...)
			if err != nil {
				t.Fatal(err)
			}
			// The other lease tells that the restart kept the data, so
			// that a free lease afterwards is the release's doing.
			_, other, releaseOther, err := lock.Hold(ctx, b, tt.other, opts...)
			if err != nil {
				t.Fatal(err)
			}

			srv.Stop(t)
			start := time.Now()
			if err := release(); err != nil {
				t.Errorf("release = %v, want nil (a failed release is not a loss)", err)
			}
			took := time.Since(start)
			mu.Lock()
			first := append([]error(nil), failures...)
			mu.Unlock()
			if len(first) != 1 {
				t.Fatalf("release with Redis down: release error handler heard %v, want one failure", first)
			}
			if code := lock.CodeOf(first[0]); code != lock.CodeServiceUnavailable && code != lock.CodeNetworkTimeout {
				t.Errorf("release with Redis down failed with %v, want ServiceUnavailable or NetworkTimeout", first[0])
			}
			t.Logf("release with Redis down returned after %v: %v", took, first[0])

			time.Sleep(time.Second) // the outage, as long as a restart
			srv.Restart(t)
			answered := time.Now()

			deadline := answered.Add(3 * time.Second)
			for {
				info, err := b.LookupID(ctx, l.ID)
				if err == nil && info == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("lease still held %v after Redis answered again (LookupID: %+v, %v), want free within about a second",
						time.Since(answered), info, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			t.Logf("free %v after Redis answered again", time.Since(answered))
			if info, err := b.LookupID(ctx, other.ID); err != nil || info == nil {
				t.Fatalf("the other lease did not survive the restart (LookupID: %+v, %v)", info, err)
			}
			// The key serves a new holder at once: the slot, or the lock.
			again, err := lock.Acquire(ctx, b, tt.key, append(opts, lock.WithWait(0))...)
			if err != nil {
				t.Fatalf("Acquire after the release was retried: %v, want granted", err)
			}
			if err := b.Release(ctx, again.ID); err != nil {
				t.Error(err)
			}
			if err := releaseOther(); err != nil {
				t.Error(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(failures) != 1 {
				t.Errorf("release error handler heard %v, want the first failure only", failures)
			}
		})
	}
}
