package rwlock_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// newBackendOn returns a Backend on client under a prefix of its own.
func newBackendOn(t *testing.T, client redis.UniversalClient) *redisbackend.Backend {
	t.Helper()
	b, err := redisbackend.New(client, &redisbackend.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// noRW hides the read-write methods of a backend.
type noRW struct{ lock.Backend }

// recorder is a lock.Hook that records each operation's kind and mode.
type recorder struct {
	mu  sync.Mutex
	ops []string
}

func (r *recorder) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		err := next(ctx, op)
		r.mu.Lock()
		r.ops = append(r.ops, op.Kind.String()+":"+op.Mode)
		r.mu.Unlock()
		return err
	}
}

// TestHooksSeeTheMode: a backend wrapped by lock.WithHooks (as otellock
// does) still takes read-write locks, and its hooks see the wait, the
// attempt and the release of each, with the mode.
func TestHooksSeeTheMode(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	b := lock.WithHooks(newBackends(t, 1)[0], rec)
	fn := func(context.Context, lock.Lease) error { return nil }
	if err := rwlock.Read(context.Background(), b, "k", fn); err != nil {
		t.Fatalf("Read: %v", err)
	}
	if err := rwlock.Write(context.Background(), b, "k", fn); err != nil {
		t.Fatalf("Write: %v", err)
	}
	want := []string{"acquire:read", "wait:read", "release:read", "acquire:write", "wait:write", "release:write"}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.ops) != len(want) {
		t.Fatalf("ops %v, want %v", rec.ops, want)
	}
	for i := range want {
		if rec.ops[i] != want[i] {
			t.Errorf("op %d: %s, want %s (all: %v)", i, rec.ops[i], want[i], rec.ops)
		}
	}
}

// TestHooksSeeTheHandOff: a reader that waits behind a writer and is
// handed the key by the writer's release is an OpGranted of its hooks.
func TestHooksSeeTheHandOff(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	inner := newBackends(t, 1)[0]
	b := lock.WithHooks(inner, rec)
	_, _, release, err := rwlock.HoldWrite(context.Background(), inner, "k")
	if err != nil {
		t.Fatalf("HoldWrite: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- rwlock.Read(context.Background(), b, "k", func(context.Context, lock.Lease) error { return nil }, lock.WithWait(5*time.Second))
	}()
	time.Sleep(300 * time.Millisecond) // the reader queues behind the writer
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Read: %v", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.Contains(rec.ops, "granted:read") {
		t.Errorf("ops %v, want a granted:read", rec.ops)
	}
}

// TestHooksSeeTheLoss: a writer whose lease is lost while it works is an
// OpLeaseLost of the hooks, with the mode; a release is not.
func TestHooksSeeTheLoss(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	inner := newBackends(t, 1)[0]
	b := lock.WithHooks(inner, rec)
	err := rwlock.Write(context.Background(), b, "k", func(ctx context.Context, l lock.Lease) error {
		if err := inner.Release(context.Background(), l.ID); err != nil {
			t.Fatalf("Release behind the holder's back: %v", err)
		}
		<-ctx.Done()
		return nil
	}, lock.WithTTL(300*time.Millisecond))
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("Write = %v, want ErrLeaseLost", err)
	}
	if err := rwlock.Read(context.Background(), b, "k", func(context.Context, lock.Lease) error { return nil }); err != nil {
		t.Fatalf("Read: %v", err)
	}
	_, _, release, err := rwlock.HoldRead(context.Background(), b, "k")
	if err != nil {
		t.Fatalf("HoldRead: %v", err)
	}
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	time.Sleep(50 * time.Millisecond) // a (wrong) report after the release would come by now
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var lost []string
	for _, op := range rec.ops {
		if strings.HasPrefix(op, "lease_lost") {
			lost = append(lost, op)
		}
	}
	if !slices.Equal(lost, []string{"lease_lost:write"}) {
		t.Errorf("lease_lost ops %v, want one, of the writer (all: %v)", lost, rec.ops)
	}
}
