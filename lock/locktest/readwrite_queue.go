package locktest

import (
	"errors"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
)

// How long the queue tests wait: for a hand-off that must come, and for
// one that must not.
const (
	handOffWait = 3 * time.Second
	quietWait   = 200 * time.Millisecond
)

func (s *suite) rwQueueTests() []test {
	return []test{
		{"a waiting writer keeps new readers out", rwTest(s.testRWWriterFirst)},
		{"waiters are served in order, readers together", rwTest(s.testRWQueueOrder)},
	}
}

// rwWaiter is a queued caller of the suite.
type rwWaiter struct {
	lock.Waiter
	name string
}

// join queues a waiter for key in mode, skipping the test when the
// backend has no queue. The waiter attempts until it holds its place: its
// attempt found the key busy, and no request for another attempt follows.
func join(t *testing.T, b rwlock.Backend, key string, mode rwlock.Mode, name string) *rwWaiter {
	t.Helper()
	id, err := b.NewLockID(key)
	if err != nil {
		t.Fatalf("NewLockID: %v", err)
	}
	w, err := b.JoinRW(key, id, mode, longTTL, 2*callTimeout)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("JoinRW: %v (no queue)", err)
	}
	if err != nil {
		t.Fatalf("JoinRW: %v", err)
	}
	t.Cleanup(func() { w.Leave(false) })
	rw := &rwWaiter{Waiter: w, name: name}
	for {
		if _, err := w.Attempt(ctx(t)); !errors.Is(err, lock.ErrLocked) {
			t.Fatalf("%s: attempt on a busy key: %v, want contention", name, err)
		}
		select {
		case l := <-w.Granted():
			if l.ID != "" {
				t.Fatalf("%s: handed a lease while the key is busy", name)
			}
		case <-time.After(quietWait):
			return rw
		}
	}
}

// granted waits for w's hand-off (or the attempt a backend asks for) and
// returns the lease.
func (w *rwWaiter) granted(t *testing.T) lock.Lease {
	t.Helper()
	deadline := time.After(handOffWait)
	for {
		select {
		case l := <-w.Granted():
			if l.ID == "" {
				var err error
				if l, err = w.Attempt(ctx(t)); errors.Is(err, lock.ErrLocked) {
					continue
				} else if err != nil {
					t.Fatalf("%s: attempt: %v", w.name, err)
				}
			}
			w.Leave(true)
			return l
		case <-deadline:
			t.Fatalf("%s: no hand-off within %v", w.name, handOffWait)
		}
	}
}

// waiting fails the test if w is handed the key within quietWait.
func (w *rwWaiter) waiting(t *testing.T) {
	t.Helper()
	deadline := time.After(quietWait)
	for {
		select {
		case l := <-w.Granted():
			if l.ID == "" {
				l, _ = w.Attempt(ctx(t))
			}
			if l.ID != "" {
				t.Fatalf("%s: granted out of turn", w.name)
			}
		case <-deadline:
			return
		}
	}
}

// testRWWriterFirst: a writer queued behind a reader keeps a new reader
// out, and the reader's release hands the writer the key with a fence
// above the reader's.
func (s *suite) testRWWriterFirst(t *testing.T, b rwlock.Backend) {
	key := s.key(t, "k")
	r := mustRW(t, b, key, rwlock.ModeRead, longTTL)
	w := join(t, b, key, rwlock.ModeWrite, "writer")
	_, err := tryRW(t, b, key, rwlock.ModeRead, longTTL)
	wantBusy(t, "a new reader behind a waiting writer", err, r.ExpiresAt)
	mustRelease(t, b, r)
	wl := w.granted(t)
	wantIncreasing(t, "the writer handed the key", wl.Fence, r.Fence)
	wantHolders(t, b, key, &wl)
	mustRelease(t, b, wl)
}

// testRWQueueOrder: behind a writer queue R1, R2, W2, R3. The writer's
// release hands the key to R1 and R2 together; their releases to W2;
// W2's to R3. Fences follow the grants.
func (s *suite) testRWQueueOrder(t *testing.T, b rwlock.Backend) {
	key := s.key(t, "k")
	w0 := mustRW(t, b, key, rwlock.ModeWrite, longTTL)
	r1 := join(t, b, key, rwlock.ModeRead, "R1")
	r2 := join(t, b, key, rwlock.ModeRead, "R2")
	w2 := join(t, b, key, rwlock.ModeWrite, "W2")
	r3 := join(t, b, key, rwlock.ModeRead, "R3")
	mustRelease(t, b, w0)
	l1, l2 := r1.granted(t), r2.granted(t)
	w2.waiting(t)
	r3.waiting(t)
	wantHolders(t, b, key, nil, l1, l2)
	mustRelease(t, b, l1)
	w2.waiting(t)
	mustRelease(t, b, l2)
	lw := w2.granted(t)
	r3.waiting(t)
	mustRelease(t, b, lw)
	l3 := r3.granted(t)
	mustRelease(t, b, l3)
	wantIncreasing(t, "R1 after the first writer", l1.Fence, w0.Fence)
	wantIncreasing(t, "W2 after R1", lw.Fence, l1.Fence)
	wantIncreasing(t, "W2 after R2", lw.Fence, l2.Fence)
	wantIncreasing(t, "R3 after W2", l3.Fence, lw.Fence)
}
