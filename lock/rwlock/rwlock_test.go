package rwlock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// fleetState checks, across goroutines of several Backends, that a writer
// never holds a key beside anyone and that fences increase: a writer's is
// above every fence granted before it, a reader's above every writer's
// before it.
type fleetState struct {
	mu              sync.Mutex
	readers, writer int
	maxFence        lock.Fence // of every grant so far
	maxWriter       lock.Fence // of every writer so far
	reads, writes   int
}

func (s *fleetState) enter(t *testing.T, mode rwlock.Mode, f lock.Fence) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if mode == rwlock.ModeWrite {
		if s.readers > 0 || s.writer > 0 {
			t.Errorf("a writer beside %d readers and %d writers", s.readers, s.writer)
		}
		if f.Compare(s.maxFence) <= 0 {
			t.Errorf("writer fence %s, want above every earlier grant's (%s)", f, s.maxFence)
		}
		s.writer++
		s.maxWriter = f
		s.writes++
	} else {
		if s.writer > 0 {
			t.Errorf("a reader beside a writer")
		}
		if f.Compare(s.maxWriter) <= 0 {
			t.Errorf("reader fence %s, want above every earlier writer's (%s)", f, s.maxWriter)
		}
		s.readers++
		s.reads++
	}
	if f.Compare(s.maxFence) > 0 {
		s.maxFence = f
	}
}

func (s *fleetState) leave(mode rwlock.Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if mode == rwlock.ModeWrite {
		s.writer--
	} else {
		s.readers--
	}
}

// TestFleetReadersAndWriters: 3 instances x 4 goroutines read and write
// one key for a second; no writer ever holds it beside anyone, and fences
// order the grants.
func TestFleetReadersAndWriters(t *testing.T) {
	t.Parallel()
	bs := newBackends(t, 3)
	var st fleetState
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 12 {
		b := bs[i%3]
		mode := rwlock.ModeRead
		if i%4 == 0 {
			mode = rwlock.ModeWrite
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				f := func(ctx context.Context, l lock.Lease) error {
					st.enter(t, mode, l.Fence)
					time.Sleep(2 * time.Millisecond)
					st.leave(mode)
					return nil
				}
				var err error
				if mode == rwlock.ModeWrite {
					err = rwlock.Write(ctx, b, "doc", f, lock.WithWait(time.Second))
				} else {
					err = rwlock.Read(ctx, b, "doc", f, lock.WithWait(time.Second))
				}
				if err != nil && ctx.Err() == nil {
					t.Errorf("%s: %v", mode, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if st.reads == 0 || st.writes == 0 {
		t.Fatalf("%d reads and %d writes, want both", st.reads, st.writes)
	}
	t.Logf("%d reads, %d writes", st.reads, st.writes)
}

// TestWriterNotStarved: under a stream of overlapping readers from two
// instances, a writer on a third is granted the key, while the readers
// still come, as soon as the readers that held it release.
func TestWriterNotStarved(t *testing.T) {
	t.Parallel()
	bs := newBackends(t, 3)
	written := make(chan struct{})
	var readsAfter atomic.Int64 // reads that began after the writer finished
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 12 * time.Millisecond) // staggered: they always overlap
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				err := rwlock.Read(context.Background(), bs[i%2], "cfg", func(context.Context, lock.Lease) error {
					select {
					case <-written:
						readsAfter.Add(1)
					default:
					}
					time.Sleep(100 * time.Millisecond)
					return nil
				}, lock.WithWait(10*time.Second))
				if err != nil {
					t.Errorf("Read: %v", err)
					return
				}
				if readsAfter.Load() > 10 {
					return
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond) // the readers overlap by now
	err := rwlock.Write(context.Background(), bs[2], "cfg", func(context.Context, lock.Lease) error {
		close(written)
		return nil
	}, lock.WithWait(3*time.Second))
	if err != nil {
		t.Fatalf("Write under a stream of readers: %v", err)
	}
	wg.Wait()
	if readsAfter.Load() == 0 {
		t.Fatalf("no read after the write: the readers' stream had stopped, so the test proves nothing")
	}
}

// TestWriterBehindLostReaders: readers that never release (a crashed
// process) hold the key until their TTL, by the server's clock; a writer
// waiting behind them is granted then.
func TestWriterBehindLostReaders(t *testing.T) {
	t.Parallel()
	b := newBackends(t, 1)[0]
	ctx := context.Background()
	var last time.Time
	for range 2 {
		id, _ := b.NewLockID("k")
		r, err := b.AcquireRW(ctx, "k", id, rwlock.ModeRead, 400*time.Millisecond)
		if err != nil {
			t.Fatalf("AcquireRW: %v", err)
		}
		last = r.ExpiresAt
	}
	err := rwlock.Write(ctx, b, "k", func(ctx context.Context, l lock.Lease) error {
		if time.Now().Before(last.Add(-50 * time.Millisecond)) {
			t.Errorf("writer granted at %v, before the readers' expiry %v", time.Now(), last)
		}
		return nil
	}, lock.WithWait(5*time.Second))
	if err != nil {
		t.Fatalf("Write behind expiring readers: %v", err)
	}
}

// TestContention: a reader refused by a writer gets ErrLocked with the
// writer's expiry, for Retry-After.
func TestContention(t *testing.T) {
	t.Parallel()
	b := newBackends(t, 1)[0]
	held, w, release, err := rwlock.HoldWrite(context.Background(), b, "k")
	if err != nil {
		t.Fatalf("HoldWrite: %v", err)
	}
	defer release()
	if l, ok := lock.LeaseFrom(held); !ok || l.Fence != w.Fence {
		t.Errorf("LeaseFrom(held) = %+v, %v; want the writer's lease", l, ok)
	}
	err = rwlock.Read(context.Background(), b, "k", func(context.Context, lock.Lease) error {
		t.Error("a reader ran beside the writer")
		return nil
	}, lock.WithWait(0))
	var le *lock.LockedError
	if !errors.Is(err, lock.ErrLocked) || !errors.As(err, &le) || lock.CodeOf(err) != lock.CodeAcquisitionTimeout {
		t.Fatalf("Read beside a writer: %v, want ErrLocked with CodeAcquisitionTimeout", err)
	}
	if d := le.ExpiresAt.Sub(w.ExpiresAt); d < -5*time.Millisecond || d > time.Second {
		t.Errorf("ExpiresAt %v, want the writer's %v", le.ExpiresAt, w.ExpiresAt)
	}
	if err := release(); err != nil {
		t.Errorf("release: %v", err)
	}
}

// TestLeaseLost: a writer whose lease is released behind its back (an
// operator's force release) sees its context end with ErrLeaseLost, and
// Write returns it.
func TestLeaseLost(t *testing.T) {
	t.Parallel()
	b := newBackends(t, 1)[0]
	err := rwlock.Write(context.Background(), b, "k", func(ctx context.Context, l lock.Lease) error {
		if err := b.Release(context.Background(), l.ID); err != nil {
			t.Fatalf("Release behind the holder's back: %v", err)
		}
		select {
		case <-ctx.Done():
			if !errors.Is(context.Cause(ctx), lock.ErrLeaseLost) {
				t.Errorf("cause %v, want ErrLeaseLost", context.Cause(ctx))
			}
		case <-time.After(5 * time.Second):
			t.Error("the held context did not end after the lease was lost")
		}
		return nil
	}, lock.WithTTL(300*time.Millisecond))
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Fatalf("Write = %v, want ErrLeaseLost", err)
	}
}

// TestBadInput: bad input fails with InvalidArgument before any command
// reaches Redis.
func TestBadInput(t *testing.T) {
	t.Parallel()
	client := redistest.Shared(t).Client(t)
	counter := redistest.Count(client)
	b := newBackendOn(t, client)
	plain := lock.WithHooks(noRW{b}) // a backend without read-write locks
	fn := func(context.Context, lock.Lease) error { return nil }
	for _, tc := range []struct {
		desc string
		call func() error
		want error // also matched, when set
	}{
		{"empty key", func() error { return rwlock.Read(context.Background(), b, "", fn) }, nil},
		{"invalid UTF-8", func() error { return rwlock.Write(context.Background(), b, "\xff", fn) }, nil},
		{"WithLimit", func() error { return rwlock.Read(context.Background(), b, "k", fn, lock.WithLimit(3)) }, nil},
		{"zero TTL", func() error { return rwlock.Write(context.Background(), b, "k", fn, lock.WithTTL(0)) }, nil},
		{"nil function", func() error { return rwlock.Read(context.Background(), b, "k", nil) }, nil},
		{"WithLease", func() error {
			_, _, _, err := rwlock.HoldRead(context.Background(), b, "k", lock.WithLease(lock.Lease{ID: "x"}))
			return err
		}, nil},
		{"no read-write backend", func() error { return rwlock.Write(context.Background(), plain, "k", fn) }, errors.ErrUnsupported},
	} {
		before := counter.Commands.Load()
		err := tc.call()
		if lock.CodeOf(err) != lock.CodeInvalidArgument || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: %v, want InvalidArgument", tc.desc, err)
		}
		if n := counter.Commands.Load() - before; n != 0 {
			t.Errorf("%s: %d commands sent, want none", tc.desc, n)
		}
	}
}
