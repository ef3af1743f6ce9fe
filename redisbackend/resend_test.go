package redisbackend_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// lossyDialer makes a go-redis client lose replies after the server ran
// the command: when armed, the connection that just wrote a script command
// (EVALSHA or EVAL, alone or in a pipeline) reads the server's reply,
// which proves the script ran, throws it away and reports the connection
// closed (io.EOF), as when a proxy or the network drops it after the
// write. go-redis then discards that connection and, with its default
// MaxRetries, sends the command again on another one: the script runs
// twice. (A lost reply that ends in a read timeout is re-sent the same
// way, but go-redis v9.23 first waits 5 s on the dead connection.)
type lossyDialer struct {
	// drop decides, for each script write, whether its reply is lost.
	drop func() bool
	lost atomic.Int64 // replies thrown away
}

func (d *lossyDialer) hook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &lossyConn{Conn: c, d: d}, nil
	}
}

type lossyConn struct {
	net.Conn
	d     *lossyDialer
	armed bool // the last write was a script whose reply is to be lost
}

func (c *lossyConn) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("evalsha")) || bytes.Contains(p, []byte("\r\neval\r\n")) {
		c.armed = c.d.drop()
	}
	return c.Conn.Write(p)
}

func (c *lossyConn) Read(p []byte) (int, error) {
	if !c.armed {
		return c.Conn.Read(p)
	}
	c.armed = false
	if _, err := c.Conn.Read(p); err != nil {
		return 0, err
	}
	c.d.lost.Add(1)
	_ = c.Conn.Close()
	return 0, io.EOF
}

// alternate returns a drop function that loses every other script reply:
// run from one goroutine, every script command runs twice (the first copy's
// reply is lost, the re-sent copy's comes back).
func alternate() func() bool {
	var n atomic.Int64
	return func() bool { return n.Add(1)%2 == 1 }
}

// TestResentCommands: with go-redis's default options (MaxRetries 3) and
// the reply of every script command lost once after it ran, so that every
// Acquire, Extend and Release runs twice, lock.Do cycles on contended keys
// from several Backends (each on its own client) all succeed: no
// self-inflicted ErrLocked (an acquisition re-sent after it took the lock
// gets its own grant back), no false ErrLeaseLost (a release re-sent after
// it released is still a release), and no key left locked.
func TestResentCommands(t *testing.T) {
	t.Parallel() // its own redis-server; mostly waiting on it
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	const workers, cycles, keys = 4, 250, 3
	var lost atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, workers*cycles)
	var backends []*redisbackend.Backend
	var dialers []*lossyDialer
	for w := 0; w < workers; w++ {
		d := &lossyDialer{drop: alternate()}
		rdb := srv.Client(t) // go-redis defaults
		rdb.AddHook(dialOnly{d.hook})
		b := newBackend(t, rdb, prefix)
		backends = append(backends, b)
		dialers = append(dialers, d)
	}
	for w, b := range backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < cycles; i++ {
				key := "k" + strconv.Itoa((w+i)%keys)
				err := lock.Do(context.Background(), b, key, func(ctx context.Context, l lock.Lease) error {
					return nil
				}, lock.WithWait(10*time.Second), lock.WithRetry(lock.Retry{MaxRetries: 1_000_000, BaseDelay: time.Millisecond}),
					lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) { errs <- errors.New("release: " + err.Error()) }))
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	counts := map[string]int{}
	for err := range errs {
		switch {
		case errors.Is(err, lock.ErrLeaseLost):
			counts["false ErrLeaseLost"]++
		case errors.Is(err, lock.ErrLocked):
			counts["ErrLocked"]++
		default:
			counts[err.Error()]++
		}
	}
	for _, d := range dialers {
		lost.Add(d.lost.Load())
	}
	if lost.Load() < workers*cycles*2 {
		t.Fatalf("only %d replies lost; the fault did not fire (want >= %d)", lost.Load(), workers*cycles*2)
	}
	for what, n := range counts {
		t.Errorf("%d x %s", n, what)
	}
	ctx := context.Background()
	for k := 0; k < keys; k++ {
		if held, err := backends[0].IsLocked(ctx, "k"+strconv.Itoa(k)); err != nil || held {
			t.Errorf("k%d left locked (%v, %v)", k, held, err)
		}
	}
	t.Logf("%d cycles, %d replies lost and commands re-sent", workers*cycles, lost.Load())
}

// TestResentReleaseStillReportsALostLease: with every reply lost once, a
// lease that really was lost (its key deleted behind the holder's back,
// as an operator's force-release or an eviction would) is still reported
// as lost by Do; the tombstones only answer copies of a release that ran.
func TestResentReleaseStillReportsALostLease(t *testing.T) {
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	d := &lossyDialer{drop: alternate()}
	rdb := srv.Client(t)
	rdb.AddHook(dialOnly{d.hook})
	b := newBackend(t, rdb, prefix)
	admin := srv.Client(t)
	ctx := context.Background()
	err := lock.Do(ctx, b, "victim", func(ctx context.Context, l lock.Lease) error {
		return admin.Del(ctx, prefix+":victim").Err()
	})
	if !errors.Is(err, lock.ErrLeaseLost) {
		t.Errorf("Do after the lock key was deleted = %v, want ErrLeaseLost", err)
	}
	if d.lost.Load() == 0 {
		t.Error("no reply was lost; the fault did not fire")
	}
}

// TestAcquireIDIsIdempotent: AcquireID sent twice with one id returns one
// grant (same fence); after its release the id takes nothing, so a late
// copy of the acquisition cannot take the key again; a second Release call
// (not a copy of the first) still reports the lease not held; and a
// release of an id that was never granted retires it the same way.
func TestAcquireIDIsIdempotent(t *testing.T) {
	b := newBackend(t, redistest.Start(t).Client(t), "idem")
	ctx := context.Background()
	id, err := b.NewLockID("k")
	if err != nil {
		t.Fatal(err)
	}
	l1, err := b.AcquireID(ctx, "k", id, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := b.AcquireID(ctx, "k", id, time.Minute)
	if err != nil || l2.Fence != l1.Fence || l2.ID != id || !l2.ExpiresAt.Equal(l1.ExpiresAt) {
		t.Fatalf("second AcquireID = %+v, %v; want the first grant %+v back", l2, err, l1)
	}
	if err := b.Release(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(ctx, id); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("a second Release call of a released lease = %v, want ErrNotHeld (only a copy of the first call gets its answer)", err)
	}
	if _, err := b.AcquireID(ctx, "k", id, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("AcquireID with a released id = %v, want ErrNotHeld", err)
	}
	if held, _ := b.IsLocked(ctx, "k"); held {
		t.Error("a late copy of a released acquisition took the key")
	}
	// Retired without a grant.
	id2, _ := b.NewLockID("k")
	if err := b.Release(ctx, id2); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release of an id never granted = %v, want ErrNotHeld", err)
	}
	if _, err := b.AcquireID(ctx, "k", id2, time.Minute); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("AcquireID after its id was released = %v, want ErrNotHeld", err)
	}
	if _, err := b.AcquireID(ctx, "k", "not-a-lock-id", time.Minute); lock.CodeOf(err) != lock.CodeInvalidArgument {
		t.Errorf("AcquireID with a malformed id = %v, want InvalidArgument", err)
	}
	l3, err := b.Acquire(ctx, "k", time.Minute)
	if err != nil || l3.Fence <= l1.Fence {
		t.Errorf("Acquire after all that = %+v, %v; want a fresh grant with a higher fence", l3, err)
	}
}

// dialOnly is a go-redis hook that only wraps dialing.
type dialOnly struct {
	dial func(redis.DialHook) redis.DialHook
}

func (h dialOnly) DialHook(next redis.DialHook) redis.DialHook { return h.dial(next) }
func (h dialOnly) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}
func (h dialOnly) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestReplicaAckRetriesWithANewID: with ReplicaAck and no replica to
// acknowledge, every attempt takes the lock, gives it up (releasing, so
// retiring, its id) and fails ServiceUnavailable; lock.Acquire retries with
// a new id each time and ends with that error, not with the retired id's,
// and leaves the key free.
func TestReplicaAckRetriesWithANewID(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	b, err := redisbackend.New(rdb, &redisbackend.Options{ReplicaAck: redisbackend.ReplicaAck{N: 1, Timeout: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = lock.Acquire(ctx, b, "k", lock.WithWait(300*time.Millisecond), lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Millisecond}))
	if lock.CodeOf(err) != lock.CodeServiceUnavailable {
		t.Errorf("Acquire = %v, want ServiceUnavailable (no replica acknowledged)", err)
	}
	if held, err := b.IsLocked(ctx, "k"); err != nil || held {
		t.Errorf("IsLocked = %v, %v; want free", held, err)
	}
}

// TestResentMarkedCycles: with the reply of every script command lost
// once after it ran, so that each runs twice, AcquireRecord takes a free
// key (the copy gets its own grant back, not contention), ReleaseRecord
// stores the record and releases (the copy is still a release), and the
// next AcquireRecord answers with the record, taking nothing; the same
// for AcquireDone and ReleaseDone. No key is left locked.
func TestResentMarkedCycles(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	d := &lossyDialer{drop: alternate()}
	rdb := srv.Client(t) // go-redis defaults: the lost replies are re-sent
	rdb.AddHook(dialOnly{d.hook})
	b := newBackend(t, rdb, strings.TrimSuffix(redistest.Prefix(t), ":"))
	ctx := context.Background()
	const cycles = 20
	for i := range cycles {
		key := "k" + strconv.Itoa(i)
		want := []byte("answer " + key)
		l, r, err := b.AcquireRecord(ctx, key, time.Minute)
		if err != nil || l.ID == "" || r != nil {
			t.Fatalf("AcquireRecord(%s) = %q, %q, %v; want a lease", key, l.ID, r, err)
		}
		if err := b.ReleaseRecord(ctx, l, want, time.Minute); err != nil {
			t.Fatalf("ReleaseRecord(%s): %v", key, err)
		}
		if l, r, err = b.AcquireRecord(ctx, key, time.Minute); err != nil || l.ID != "" || !bytes.Equal(r, want) {
			t.Fatalf("AcquireRecord(%s) after its record = %q, %q, %v; want the record", key, l.ID, r, err)
		}
		key = "d" + strconv.Itoa(i)
		l, done, err := b.AcquireDone(ctx, key, time.Minute)
		if err != nil || l.ID == "" || done {
			t.Fatalf("AcquireDone(%s) = %q, %v, %v; want a lease", key, l.ID, done, err)
		}
		if err := b.ReleaseDone(ctx, l, time.Minute); err != nil {
			t.Fatalf("ReleaseDone(%s): %v", key, err)
		}
		if l, done, err = b.AcquireDone(ctx, key, time.Minute); err != nil || l.ID != "" || !done {
			t.Fatalf("AcquireDone(%s) after its marker = %q, %v, %v; want done", key, l.ID, done, err)
		}
	}
	if n := d.lost.Load(); n < cycles*6/2 {
		t.Fatalf("only %d replies lost; the fault did not fire", n)
	}
	for i := range cycles {
		for _, key := range []string{"k" + strconv.Itoa(i), "d" + strconv.Itoa(i)} {
			if held, err := b.IsLocked(ctx, key); err != nil || held {
				t.Errorf("%s left locked (%v, %v)", key, held, err)
			}
		}
	}
}
