package redisbackend_test

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/lock/multilock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/redisbackend/admin"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// stallCall is one entry point called while Redis is stopped.
type stallCall struct {
	desc string
	// covers names the Backend methods the call runs (for the
	// completeness check).
	covers []string
	// call runs the entry point under ctx, whose deadline is the stall
	// matrix's. A call that ends by a bound of its own (a release
	// function's WithReleaseTimeout) is given that bound as the deadline.
	call func(ctx context.Context) error
	// anyErr: the call's error does not report the deadline (Keep's stop
	// returns the loss, nil when the lease was not lost); only its time
	// is checked.
	anyErr bool
	// grace is how long the call may take past the deadline by its
	// documentation: 0 for all but a leader's hand-off.
	grace time.Duration
}

// notCallingRedis are the exported methods of *redisbackend.Backend that
// the stall matrix leaves out, and why.
var notCallingRedis = map[string]string{
	"Capabilities": "a constant",
	"Close":        "stops the subscriber; no command",
	"Config":       "what New recorded, in memory",
	"Group":        "names the key's hash slot, in memory",
	"Layout":       "in memory",
	"Locals":       "in memory",
	"NewLockID":    "random bytes, in memory",
	"Operator":     "returns admin's view; admin's functions are in the matrix",
	"Prefix":       "in memory",
	// Watch takes no context: it registers notify and the Backend's
	// subscriber goroutine subscribes. election.Observe, in the matrix,
	// runs it.
	"Watch": "no context; the subscription runs on the Backend's goroutine",
	// Join and JoinRW do no I/O; the matrix calls their waiters' Attempt.
}

// TestStalledServerEveryEntryPoint: with Redis stopped (SIGSTOP), every
// entry point that talks to Redis through a Backend, the Backend's own
// methods and the package functions that run on it (lock, rwlock,
// multilock, election, admin), returns by its context's deadline with an
// error that says so, on go-redis's default client options. The
// Backend's methods are listed by reflection: a method that is neither in
// the matrix nor in notCallingRedis fails the test.
func TestStalledServerEveryEntryPoint(t *testing.T) {
	t.Parallel() // its own redis-server; mostly waiting on it
	srv := redistest.Start(t)
	stallMatrix(t, func() redis.UniversalClient { return srv.Client(t) }, srv.Pause, srv.Resume)
}

// TestStalledClusterEveryEntryPoint is TestStalledServerEveryEntryPoint
// on a Redis Cluster (a ClusterClient with its defaults, the cluster
// layout), every node stopped.
func TestStalledClusterEveryEntryPoint(t *testing.T) {
	t.Parallel() // its own cluster; mostly waiting on it
	c := redistest.StartCluster(t)
	stallMatrix(t, func() redis.UniversalClient { return c.Client(t) }, c.Pause, c.Resume)
}

// stallMatrix runs the stall matrix on the Redis of newClient (each call
// a client of its own, with go-redis's default options), stopped by pause
// and continued by resume.
func stallMatrix(t *testing.T, newClient func() redis.UniversalClient, pause, resume func(t testing.TB)) {
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	b := newBackend(t, newClient(), prefix)
	t.Cleanup(func() { _ = b.Close() })
	// A Backend with ReplicaAck has no AcquireMulti and no waiter queue:
	// multilock takes keys one by one, lock polls.
	acked, err := redisbackend.New(newClient(), &redisbackend.Options{Prefix: prefix + "-acked",
		ReplicaAck: redisbackend.ReplicaAck{N: 1, Timeout: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = acked.Close() })

	// b under a hook, as a decorator such as otellock wraps it: the
	// package functions find the Backend's extensions under it.
	hooked := lock.WithHooks(b, passHook{})
	rdb := newClient()

	const deadline, slack = 500 * time.Millisecond, 300 * time.Millisecond
	bg := context.Background()
	take := func(key string) lock.Lease {
		t.Helper()
		l, err := b.Acquire(bg, key, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	// Held before the stall, for the calls that need a lease.
	leases := map[string]lock.Lease{}
	for _, k := range []string{"release", "extend", "batch", "done", "record", "proclaim", "multi", "keep"} {
		leases[k] = take(k)
	}
	// A Hold's release returns nil when the release fails: the failure
	// goes to WithReleaseErrorHandler, whose error the matrix checks.
	type released struct {
		release func() error
		err     chan error
	}
	releaseOpts := func(r *released) []lock.Option {
		r.err = make(chan error, 1)
		return []lock.Option{lock.WithReleaseTimeout(deadline),
			lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) { r.err <- err })}
	}
	hold := func(h func(ctx context.Context, b lock.Backend, key string, opts ...lock.Option) (context.Context, lock.Lease, func() error, error), key string) *released {
		t.Helper()
		r := &released{}
		var err error
		_, _, r.release, err = h(bg, b, key, releaseOpts(r)...)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	releaseHold := hold(lock.Hold, "hold")
	releaseRead := hold(rwlock.HoldRead, "hold-read")
	releaseWrite := hold(rwlock.HoldWrite, "hold-write")
	releaseMulti := &released{}
	if _, _, releaseMulti.release, err = multilock.Hold(bg, b, []string{"{m}1", "{m}2"}, releaseOpts(releaseMulti)...); err != nil {
		t.Fatal(err)
	}
	// releaseErr runs r's release and returns the error its handler got.
	releaseErr := func(r *released) error {
		if err := r.release(); err != nil {
			return err
		}
		select {
		case err := <-r.err:
			return err
		case <-time.After(2 * deadline):
			return errors.New("no release failure reported on a stopped server")
		}
	}
	id := func(key string) string {
		id, err := b.NewLockID(key)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	waiter := func(key string, n int, mode rwlock.Mode) lock.Waiter {
		t.Helper()
		var w lock.Waiter
		var err error
		if mode != 0 {
			w, err = b.JoinRW(key, id(key), mode, time.Minute, time.Minute)
		} else {
			w, err = b.Join(key, id(key), n, time.Minute, time.Minute)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Leave(false) })
		return w
	}
	// A leader elected before the stall whose context ends during it:
	// Lead hands the term on, waiting at most a second (its doc) for the
	// backend, and returns ctx's error.
	leadCtx, leadCancel := context.WithCancel(bg)
	t.Cleanup(leadCancel)
	elected, leadDone := make(chan struct{}), make(chan error, 1)
	go func() {
		leadDone <- election.Lead(leadCtx, b, "leading", "me", func(ctx context.Context, _ lock.Lease) error {
			close(elected)
			<-ctx.Done()
			return nil
		})
	}()
	select {
	case <-elected:
	case err := <-leadDone:
		t.Fatalf("Lead returned %v before it was elected", err)
	}
	fn := func(context.Context, lock.Lease) error { return nil }
	fnMulti := func(context.Context, []lock.Lease) error { return nil }
	wait := lock.WithWait(10 * deadline) // the deadline must still win
	keepFor := func(ctx context.Context, l lock.Lease) error {
		held, stop := lock.Keep(ctx, b, l, lock.WithHeartbeat(lock.Heartbeat{Interval: 50 * time.Millisecond}))
		<-held.Done()
		return stop()
	}

	calls := []stallCall{
		{"Backend.Acquire", []string{"Acquire"}, func(ctx context.Context) error {
			_, err := b.Acquire(ctx, "k", time.Minute)
			return err
		}, false, 0},
		{"Backend.AcquireID", []string{"AcquireID"}, func(ctx context.Context) error {
			_, err := b.AcquireID(ctx, "k-id", id("k-id"), time.Minute)
			return err
		}, false, 0},
		{"Backend.AcquireSlot", []string{"AcquireSlot"}, func(ctx context.Context) error {
			_, err := b.AcquireSlot(ctx, "slots", id("slots"), 3, time.Minute)
			return err
		}, false, 0},
		{"Backend.AcquireRW", []string{"AcquireRW"}, func(ctx context.Context) error {
			_, err := b.AcquireRW(ctx, "rw", id("rw"), rwlock.ModeRead, time.Minute)
			return err
		}, false, 0},
		{"Backend.AcquireMulti", []string{"AcquireMulti"}, func(ctx context.Context) error {
			_, err := b.AcquireMulti(ctx, []string{"{g}1", "{g}2"}, []string{id("{g}1"), id("{g}2")}, time.Minute)
			return err
		}, false, 0},
		{"Backend.AcquireDone", []string{"AcquireDone"}, func(ctx context.Context) error {
			_, _, err := b.AcquireDone(ctx, "d", time.Minute)
			return err
		}, false, 0},
		{"Backend.AcquireRecord", []string{"AcquireRecord"}, func(ctx context.Context) error {
			_, _, err := b.AcquireRecord(ctx, "r", time.Minute)
			return err
		}, false, 0},
		{"Backend.Release", []string{"Release"}, func(ctx context.Context) error {
			return b.Release(ctx, leases["release"].ID)
		}, false, 0},
		{"Backend.ReleaseMulti", []string{"ReleaseMulti"}, func(ctx context.Context) error {
			return errors.Join(b.ReleaseMulti(ctx, []string{leases["multi"].ID, id("x")})...)
		}, false, 0},
		{"Backend.ReleaseDone", []string{"ReleaseDone"}, func(ctx context.Context) error {
			return b.ReleaseDone(ctx, leases["done"], time.Minute)
		}, false, 0},
		{"Backend.ReleaseRecord", []string{"ReleaseRecord"}, func(ctx context.Context) error {
			return b.ReleaseRecord(ctx, leases["record"], []byte("r"), time.Minute)
		}, false, 0},
		{"Backend.Extend", []string{"Extend"}, func(ctx context.Context) error {
			_, err := b.Extend(ctx, leases["extend"].ID, time.Minute)
			return err
		}, false, 0},
		{"Backend.ExtendBatch", []string{"ExtendBatch"}, func(ctx context.Context) error {
			return b.ExtendBatch(ctx, []lock.Lease{leases["batch"]})[0].Err
		}, false, 0},
		{"Backend.IsLocked", []string{"IsLocked"}, func(ctx context.Context) error {
			_, err := b.IsLocked(ctx, "k")
			return err
		}, false, 0},
		{"Backend.IsDone", []string{"IsDone"}, func(ctx context.Context) error {
			_, err := b.IsDone(ctx, "d")
			return err
		}, false, 0},
		{"Backend.Record", []string{"Record"}, func(ctx context.Context) error {
			_, _, err := b.Record(ctx, "r")
			return err
		}, false, 0},
		{"Backend.LookupKey", []string{"LookupKey"}, func(ctx context.Context) error {
			_, err := b.LookupKey(ctx, "release")
			return err
		}, false, 0},
		{"Backend.LookupID", []string{"LookupID"}, func(ctx context.Context) error {
			_, err := b.LookupID(ctx, leases["release"].ID)
			return err
		}, false, 0},
		{"Backend.LookupLimit", []string{"LookupLimit"}, func(ctx context.Context) error {
			_, err := b.LookupLimit(ctx, "slots")
			return err
		}, false, 0},
		{"Backend.LookupRW", []string{"LookupRW"}, func(ctx context.Context) error {
			_, err := b.LookupRW(ctx, "rw")
			return err
		}, false, 0},
		{"Backend.LookupOwner", []string{"LookupOwner"}, func(ctx context.Context) error {
			_, _, err := b.LookupOwner(ctx, "proclaim")
			return err
		}, false, 0},
		{"Backend.Proclaim", []string{"Proclaim"}, func(ctx context.Context) error {
			return b.Proclaim(ctx, leases["proclaim"], "me")
		}, false, 0},
		{"Backend.Announce", []string{"Announce"}, func(ctx context.Context) error {
			return b.Announce(ctx, leases["proclaim"])
		}, false, 0},
		{"Backend.Join: Waiter.Attempt", []string{"Join"}, func(ctx context.Context) error {
			_, err := waiter("queued", 0, 0).Attempt(ctx)
			return err
		}, false, 0},
		{"Backend.Join (slots): Waiter.Attempt", []string{"Join"}, func(ctx context.Context) error {
			_, err := waiter("queued-slots", 2, 0).Attempt(ctx)
			return err
		}, false, 0},
		{"Backend.JoinRW: Waiter.Attempt", []string{"JoinRW"}, func(ctx context.Context) error {
			_, err := waiter("queued-rw", 0, rwlock.ModeWrite).Attempt(ctx)
			return err
		}, false, 0},

		{"lock.Acquire", nil, func(ctx context.Context) error {
			_, err := lock.Acquire(ctx, b, "pk", wait)
			return err
		}, false, 0},
		{"lock.Acquire, WithLimit", nil, func(ctx context.Context) error {
			_, err := lock.Acquire(ctx, b, "pk-slots", wait, lock.WithLimit(2))
			return err
		}, false, 0},
		{"lock.Do", nil, func(ctx context.Context) error { return lock.Do(ctx, b, "pk-do", fn, wait) }, false, 0},
		{"lock.Hold", nil, func(ctx context.Context) error {
			_, _, _, err := lock.Hold(ctx, b, "pk-hold", wait)
			return err
		}, false, 0},
		{"lock.Acquire on a ReplicaAck Backend", nil, func(ctx context.Context) error {
			_, err := lock.Acquire(ctx, acked, "pk-acked", wait)
			return err
		}, false, 0},
		{"lock.Keep's extension", nil, func(ctx context.Context) error { return keepFor(ctx, leases["keep"]) }, true, 0},
		{"lock.Hold's release (WithReleaseTimeout)", nil, func(context.Context) error { return releaseErr(releaseHold) }, false, 0},
		{"rwlock.Read", nil, func(ctx context.Context) error { return rwlock.Read(ctx, b, "pk-rw", fn, wait) }, false, 0},
		{"rwlock.Write", nil, func(ctx context.Context) error { return rwlock.Write(ctx, b, "pk-rw", fn, wait) }, false, 0},
		{"rwlock.HoldRead", nil, func(ctx context.Context) error {
			_, _, _, err := rwlock.HoldRead(ctx, b, "pk-rw-hold", wait)
			return err
		}, false, 0},
		{"rwlock.HoldWrite", nil, func(ctx context.Context) error {
			_, _, _, err := rwlock.HoldWrite(ctx, b, "pk-rw-hold", wait)
			return err
		}, false, 0},
		{"rwlock.HoldRead's release", nil, func(context.Context) error { return releaseErr(releaseRead) }, false, 0},
		{"rwlock.HoldWrite's release", nil, func(context.Context) error { return releaseErr(releaseWrite) }, false, 0},
		{"multilock.Do", nil, func(ctx context.Context) error {
			return multilock.Do(ctx, b, []string{"{pm}1", "{pm}2", "other"}, fnMulti, wait)
		}, false, 0},
		{"multilock.Hold", nil, func(ctx context.Context) error {
			_, _, _, err := multilock.Hold(ctx, b, []string{"{ph}1", "{ph}2"}, wait)
			return err
		}, false, 0},
		{"multilock.Do on a ReplicaAck Backend (keys one by one)", nil, func(ctx context.Context) error {
			return multilock.Do(ctx, acked, []string{"{pa}1", "{pa}2"}, fnMulti, wait)
		}, false, 0},
		{"multilock.Hold's release", nil, func(context.Context) error { return releaseErr(releaseMulti) }, false, 0},
		{"election.Lead", nil, func(ctx context.Context) error {
			return election.Lead(ctx, b, "lead", "me", fn)
		}, false, 0},
		{"election.Lead, elected before the stall", nil, func(ctx context.Context) error {
			<-ctx.Done()
			leadCancel()
			if err := <-leadDone; !errors.Is(err, context.Canceled) {
				return err
			}
			return ctx.Err()
		}, false, time.Second},
		{"lock.Do through lock.WithHooks", nil, func(ctx context.Context) error {
			return lock.Do(ctx, hooked, "hk-do", fn, wait)
		}, false, 0},
		{"rwlock.Write through lock.WithHooks", nil, func(ctx context.Context) error {
			return rwlock.Write(ctx, hooked, "hk-rw", fn, wait)
		}, false, 0},
		{"multilock.Do through lock.WithHooks", nil, func(ctx context.Context) error {
			return multilock.Do(ctx, hooked, []string{"{hk}1", "{hk}2"}, fnMulti, wait)
		}, false, 0},
		{"election.Lead through lock.WithHooks", nil, func(ctx context.Context) error {
			return election.Lead(ctx, hooked, "hk-lead", "me", fn)
		}, false, 0},
		{"election.LeaderOf", nil, func(ctx context.Context) error {
			_, err := election.LeaderOf(ctx, b, "proclaim")
			return err
		}, false, 0},
		{"election.Observe", nil, func(ctx context.Context) error {
			ch, err := election.Observe(ctx, b, "observed")
			if err != nil {
				return err
			}
			for range ch { // closed when ctx ends
			}
			return ctx.Err()
		}, false, 0},
		{"admin.ForceRelease", nil, func(ctx context.Context) error {
			_, err := admin.ForceRelease(ctx, b, "release")
			return err
		}, false, 0},
		{"admin.ForceReleaseSlots", nil, func(ctx context.Context) error {
			_, err := admin.ForceReleaseSlots(ctx, b, "slots", "")
			return err
		}, false, 0},
		{"admin.ForceReleaseRW", nil, func(ctx context.Context) error {
			_, err := admin.ForceReleaseRW(ctx, b, "rw")
			return err
		}, false, 0},
		{"admin.Check", nil, func(ctx context.Context) error {
			_, err := admin.Check(ctx, b)
			return err
		}, false, 0},
		{"admin.CheckRecordedConfig", nil, func(ctx context.Context) error {
			_, err := admin.CheckRecordedConfig(ctx, b)
			return err
		}, false, 0},
		{"admin.RecordedConfigs", nil, func(ctx context.Context) error {
			_, err := admin.RecordedConfigs(ctx, rdb, prefix)
			return err
		}, false, 0},
	}
	checkComplete(t, b, calls)

	pause(t)
	t.Cleanup(func() { resume(t) })
	type result struct {
		took time.Duration
		err  error
	}
	results := make([]result, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(bg, deadline)
			defer cancel()
			start := time.Now()
			err := c.call(ctx)
			results[i] = result{time.Since(start), err}
		}()
	}
	wg.Wait()
	for i, c := range calls {
		r := results[i]
		if by := deadline + c.grace + slack; r.took > by {
			t.Errorf("%s returned after %v, want within %v", c.desc, r.took.Round(time.Millisecond), by)
		}
		if !c.anyErr && !deadlineError(r.err) {
			t.Errorf("%s: err %v, want one matching context.DeadlineExceeded (or NetworkTimeout, Aborted)", c.desc, r.err)
		}
	}
}

// passHook is a lock.Hook that only passes each operation on.
type passHook struct{}

func (passHook) Operation(next lock.OpFunc) lock.OpFunc { return next }

// deadlineError reports whether err says a deadline passed.
func deadlineError(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	c := lock.CodeOf(err)
	return (c == lock.CodeNetworkTimeout || c == lock.CodeAborted) && strings.Contains(err.Error(), "deadline")
}

// checkComplete fails t for every exported method of b that is neither
// covered by calls nor in notCallingRedis, context or not: a new method
// is put in one or the other on purpose.
func checkComplete(t *testing.T, b *redisbackend.Backend, calls []stallCall) {
	t.Helper()
	covered := map[string]bool{}
	for _, c := range calls {
		for _, m := range c.covers {
			covered[m] = true
		}
	}
	bt := reflect.TypeOf(b)
	var missing []string
	for i := range bt.NumMethod() {
		name := bt.Method(i).Name
		if _, ok := notCallingRedis[name]; !ok && !covered[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("Backend methods neither in the stall matrix nor in notCallingRedis: %v", missing)
	}
	for name := range covered {
		if _, ok := bt.MethodByName(name); !ok {
			t.Errorf("the stall matrix covers %s, which Backend does not have", name)
		}
	}
}
