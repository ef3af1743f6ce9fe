package lock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// observedBackend is the fake with the optional lock.Observer interface,
// recording what Acquire, Do and Keep report.
type observedBackend struct {
	*fakeBackend
	mu       sync.Mutex
	started  []string
	attempts []int
	waits    []time.Duration
	done     []error
	lost     []error
}

type ctxMark struct{}

func (o *observedBackend) ObserveAcquire(ctx context.Context, key string) (context.Context, lock.AcquireObserver) {
	o.mu.Lock()
	o.started = append(o.started, key)
	o.mu.Unlock()
	return context.WithValue(ctx, ctxMark{}, "observed"), o
}

func (o *observedBackend) Attempt(n int, err error, wait time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attempts = append(o.attempts, n)
	o.waits = append(o.waits, wait)
}

func (o *observedBackend) Done(l lock.Lease, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done = append(o.done, err)
}

func (o *observedBackend) ObserveLeaseLost(ctx context.Context, l lock.Lease, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lost = append(o.lost, err)
}

func TestObserverSeesWaitAttemptsAndOutcome(t *testing.T) {
	f := newFake()
	o := &observedBackend{fakeBackend: f}
	ctx := context.Background()
	holder, err := f.Acquire(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// The backend's Acquire must see the observer's context.
	var sawMark bool
	f.setHook(func(ctx context.Context, method string) error {
		if method == "Acquire" && ctx.Value(ctxMark{}) == "observed" {
			sawMark = true
		}
		return nil
	})
	_, err = lock.Acquire(ctx, o, "k", lock.WithMaxRetries(2), lock.WithBaseDelay(time.Millisecond))
	if !errors.Is(err, lock.ErrLocked) {
		t.Fatalf("Acquire err = %v, want ErrLocked", err)
	}
	if !sawMark {
		t.Error("the backend's Acquire did not run under the observer's context")
	}
	o.mu.Lock()
	if got := len(o.started); got != 1 {
		t.Errorf("ObserveAcquire called %d times, want 1", got)
	}
	if want := []int{1, 2, 3}; len(o.attempts) != 3 || o.attempts[0] != 1 || o.attempts[2] != 3 {
		t.Errorf("attempts = %v, want %v", o.attempts, want)
	}
	if len(o.waits) == 3 && (o.waits[0] <= 0 || o.waits[2] != 0) {
		t.Errorf("waits = %v, want positive waits and 0 for the last attempt", o.waits)
	}
	if len(o.done) != 1 || !errors.Is(o.done[0], lock.ErrLocked) {
		t.Errorf("Done errors = %v, want one matching ErrLocked", o.done)
	}
	o.mu.Unlock()

	if err := f.Release(ctx, holder.ID); err != nil {
		t.Fatal(err)
	}
	if err := lock.Do(ctx, o, "k", func(context.Context, lock.Lease) error { return nil }); err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.done) != 2 || o.done[1] != nil {
		t.Errorf("Done after a successful Do = %v, want a nil error", o.done)
	}
}

func TestObserverSeesLeaseLost(t *testing.T) {
	f := newFake()
	o := &observedBackend{fakeBackend: f}
	ctx := context.Background()
	l, err := f.Acquire(ctx, "k", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	held, stop := lock.Keep(ctx, o, l)
	defer stop()
	f.steal("k")
	select {
	case <-held.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("lease loss not noticed")
	}
	stop()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.lost) != 1 || !errors.Is(o.lost[0], lock.ErrLeaseLost) {
		t.Errorf("ObserveLeaseLost errors = %v, want one matching ErrLeaseLost", o.lost)
	}
}
