package lock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
)

// notifyingBackend is the fake with the optional lock.Notifier interface;
// the test fires the watches by hand.
type notifyingBackend struct {
	*fakeBackend
	nilWatch bool         // WatchKey returns a nil channel: notifications unavailable
	onWatch  func()       // called at the end of every WatchKey
	watched  chan int     // receives the index of every new watch
	mu       sync.Mutex   // guards watches
	watches  []*fakeWatch // in order of registration
}

type fakeWatch struct {
	key       string
	ch        chan struct{}
	cancelled int
}

var _ lock.Notifier = (*notifyingBackend)(nil)

func newNotifying() *notifyingBackend {
	return &notifyingBackend{fakeBackend: newFake(), watched: make(chan int, 100)}
}

func (n *notifyingBackend) WatchKey(key string) (<-chan struct{}, func()) {
	w := &fakeWatch{key: key, ch: make(chan struct{}, 1)}
	n.mu.Lock()
	n.watches = append(n.watches, w)
	i := len(n.watches) - 1
	n.mu.Unlock()
	if n.onWatch != nil {
		n.onWatch()
	}
	n.watched <- i
	cancel := func() {
		n.mu.Lock()
		w.cancelled++
		n.mu.Unlock()
	}
	if n.nilWatch {
		return nil, cancel
	}
	return w.ch, cancel
}

// fire wakes watch i.
func (n *notifyingBackend) fire(i int) {
	n.mu.Lock()
	w := n.watches[i]
	n.mu.Unlock()
	w.ch <- struct{}{}
}

// stats returns the number of watches and how many were never cancelled.
func (n *notifyingBackend) stats() (watches, open int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, w := range n.watches {
		if w.cancelled == 0 {
			open++
		}
	}
	return len(n.watches), open
}

// waitAttempts waits until the backend's Acquire ran n times.
func waitAttempts(t *testing.T, f *fakeBackend, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for f.count("Acquire") < n {
		if time.Now().After(deadline) {
			t.Fatalf("backend Acquire ran %d times, want %d", f.count("Acquire"), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// never is a polling schedule that never fires within a test.
var never = []lock.Option{
	lock.WithBaseDelay(time.Hour),
	lock.WithJitter(lock.JitterNone),
	lock.WithWait(time.Minute),
}

// TestNotifyRechecksAfterWatch: a release between the failed attempt and
// the watch is not published to the watch; the re-check right after
// watching finds the key free without waiting for a poll.
func TestNotifyRechecksAfterWatch(t *testing.T) {
	n := newNotifying()
	ctx := context.Background()
	if _, err := n.Acquire(ctx, "k", time.Minute); err != nil {
		t.Fatal(err)
	}
	n.onWatch = func() { n.steal("k") } // released before the watch, unpublished
	start := time.Now()
	l, err := lock.Acquire(ctx, n, "k", never...)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Acquire took %v", d)
	}
	if got := n.count("Acquire"); got != 3 { // the holder's, the waiter's first and its re-check
		t.Errorf("backend Acquire ran %d times, want 3", got)
	}
	if watches, open := n.stats(); watches != 1 || open != 0 {
		t.Errorf("%d watches, %d not cancelled; want 1, 0", watches, open)
	}
	_ = n.Release(ctx, l.ID)
}

// TestNotifyWakeTriggersAttempt: each wake-up leads at once to an attempt
// and a new watch registered before it; a spurious one just waits again.
func TestNotifyWakeTriggersAttempt(t *testing.T) {
	n := newNotifying()
	ctx := context.Background()
	if _, err := n.Acquire(ctx, "k", time.Minute); err != nil {
		t.Fatal(err)
	}
	type result struct {
		l   lock.Lease
		err error
	}
	res := make(chan result, 1)
	go func() {
		l, err := lock.Acquire(ctx, n, "k", never...)
		res <- result{l, err}
	}()
	<-n.watched
	waitAttempts(t, n.fakeBackend, 3) // holder, first attempt, re-check

	n.fire(0) // spurious: still held
	if i := <-n.watched; i != 1 {
		t.Fatalf("re-armed watch %d, want 1", i)
	}
	waitAttempts(t, n.fakeBackend, 4)
	select {
	case r := <-res:
		t.Fatalf("Acquire returned on a spurious wake-up: %v", r.err)
	case <-time.After(20 * time.Millisecond):
	}

	n.steal("k")
	n.fire(1)
	select {
	case r := <-res:
		if r.err != nil {
			t.Fatalf("Acquire: %v", r.err)
		}
		_ = n.Release(ctx, r.l.ID)
	case <-time.After(5 * time.Second):
		t.Fatal("Acquire did not return after the wake-up")
	}
	if got := n.count("Acquire"); got != 5 {
		t.Errorf("backend Acquire ran %d times, want 5", got)
	}
	if watches, open := n.stats(); watches != 3 || open != 0 {
		t.Errorf("%d watches, %d not cancelled; want 3, 0", watches, open)
	}
}

// TestNotifyTimerFallback: a watch that never fires (a holder whose lease
// expires publishes nothing) leaves the backoff timer to find the key free.
func TestNotifyTimerFallback(t *testing.T) {
	n := newNotifying()
	ctx := context.Background()
	if _, err := n.Acquire(ctx, "k", time.Minute); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(60*time.Millisecond, func() { n.steal("k") })
	start := time.Now()
	l, err := lock.Acquire(ctx, n, "k", lock.WithBaseDelay(20*time.Millisecond),
		lock.WithBackoff(lock.BackoffFixed), lock.WithWait(5*time.Second), lock.WithMaxRetries(100))
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if d := time.Since(start); d < 60*time.Millisecond || d > 2*time.Second {
		t.Errorf("Acquire took %v, want the first poll after 60ms", d)
	}
	if watches, open := n.stats(); watches != 1 || open != 0 {
		t.Errorf("%d watches, %d not cancelled; want 1 (timer attempts keep the watch), 0", watches, open)
	}
	_ = n.Release(ctx, l.ID)
}

// TestNotifyRetryBudget: the re-check after watching is not a retry;
// every other attempt is, and a nil watch means plain polling.
func TestNotifyRetryBudget(t *testing.T) {
	for _, tc := range []struct {
		name     string
		nilWatch bool
		want     int
	}{
		{"watch", false, 4}, // first + re-check + 2 retries
		{"nil watch", true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNotifying()
			n.nilWatch = tc.nilWatch
			ctx := context.Background()
			if _, err := n.Acquire(ctx, "k", time.Minute); err != nil {
				t.Fatal(err)
			}
			_, err := lock.Acquire(ctx, n, "k", lock.WithMaxRetries(2), lock.WithBaseDelay(time.Millisecond))
			if lock.CodeOf(err) != lock.CodeAcquisitionTimeout || !errors.Is(err, lock.ErrLocked) {
				t.Fatalf("Acquire: %v, want an acquisition timeout matching ErrLocked", err)
			}
			if got := n.count("Acquire") - 1; got != tc.want {
				t.Errorf("%d attempts, want %d", got, tc.want)
			}
			if watches, open := n.stats(); watches != 1 || open != 0 {
				t.Errorf("%d watches, %d not cancelled; want 1, 0", watches, open)
			}
		})
	}
}

// TestNotifyWakeupsCountAsRetries: wake-ups spend the retry budget, and
// the timeout bounds the wait however often they come.
// TestNotifyWakeupsAndRetries: an attempt brought by a wake-up follows a
// release and does not use up MaxRetries; the timeout bounds a storm of
// (spurious) wake-ups.
func TestNotifyWakeupsAndRetries(t *testing.T) {
	t.Run("wake-ups do not use up retries", func(t *testing.T) {
		n := newNotifying()
		ctx := context.Background()
		if _, err := n.Acquire(ctx, "k", time.Minute); err != nil {
			t.Fatal(err)
		}
		go func() {
			for i := range n.watched {
				n.fire(i) // every watch fires at once: a storm of spurious wake-ups
			}
		}()
		start := time.Now()
		_, err := lock.Acquire(ctx, n, "k", lock.WithBaseDelay(time.Hour),
			lock.WithWait(200*time.Millisecond), lock.WithMaxRetries(3))
		close(n.watched)
		if lock.CodeOf(err) != lock.CodeAcquisitionTimeout {
			t.Fatalf("Acquire: %v, want an acquisition timeout", err)
		}
		if got := n.count("Acquire") - 1; got <= 5 { // more than first + re-check + 3 retries
			t.Errorf("%d attempts: wake-ups used up the retries", got)
		}
		if d := time.Since(start); d < 200*time.Millisecond || d > 3*time.Second {
			t.Errorf("Acquire gave up after %v, want ~200ms (the timeout)", d)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		n := newNotifying()
		ctx := context.Background()
		if _, err := n.Acquire(ctx, "k", time.Minute); err != nil {
			t.Fatal(err)
		}
		go func() {
			for i := range n.watched {
				time.Sleep(5 * time.Millisecond)
				n.fire(i)
			}
		}()
		start := time.Now()
		_, err := lock.Acquire(ctx, n, "k", lock.WithBaseDelay(time.Hour),
			lock.WithWait(100*time.Millisecond), lock.WithMaxRetries(1_000_000))
		close(n.watched)
		if lock.CodeOf(err) != lock.CodeAcquisitionTimeout {
			t.Fatalf("Acquire: %v, want an acquisition timeout", err)
		}
		if d := time.Since(start); d < 100*time.Millisecond || d > 2*time.Second {
			t.Errorf("Acquire gave up after %v, want ~100ms", d)
		}
		if _, open := n.stats(); open != 0 {
			t.Errorf("%d watches not cancelled", open)
		}
	})
}

// TestNotifyCancelUnwatches: ctx ends the wait and the watch is cancelled.
func TestNotifyCancelUnwatches(t *testing.T) {
	n := newNotifying()
	if _, err := n.Acquire(context.Background(), "k", time.Minute); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := lock.Acquire(ctx, n, "k", never...)
		res <- err
	}()
	<-n.watched
	waitAttempts(t, n.fakeBackend, 3)
	cancel()
	err := <-res
	if !errors.Is(err, context.Canceled) || lock.CodeOf(err) != lock.CodeAborted {
		t.Fatalf("Acquire: %v, want aborted matching context.Canceled", err)
	}
	if watches, open := n.stats(); watches != 1 || open != 0 {
		t.Errorf("%d watches, %d not cancelled; want 1, 0", watches, open)
	}
}

// TestNotifyNoWatchWithoutWait: a single attempt (timeout 0 or no
// retries) never watches.
func TestNotifyNoWatchWithoutWait(t *testing.T) {
	n := newNotifying()
	ctx := context.Background()
	if _, err := n.Acquire(ctx, "k", time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, opt := range []lock.Option{lock.WithWait(0), lock.WithMaxRetries(0)} {
		if _, err := lock.Acquire(ctx, n, "k", opt); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("Acquire: %v, want ErrLocked", err)
		}
	}
	if watches, _ := n.stats(); watches != 0 {
		t.Errorf("%d watches for single attempts, want 0", watches)
	}
}
