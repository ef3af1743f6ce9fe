package redisbackend_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestStalledServerCallsEndByTheirDeadline: Redis SIGSTOPped for 10 s
// under 32 concurrent acquisitions with a 1 s deadline, on a client with
// go-redis's default options (3 s read timeout, 3 retries, no context
// timeouts) and coalescing on, and on two more instances whose clients
// set ContextTimeoutEnabled, so that calls are sent from their callers'
// goroutines and go-redis ends them at the deadline (transport's
// TestSendsDirect checks that rule; one with coalescing on, where the first 4 calls go that way and the rest
// queue, one with it off): every call returns within 1.5 s, with
// CodeNetworkTimeout (on the wire, outcome unknown) or CodeAborted (still
// queued), matching context.DeadlineExceeded. A Release with a deadline
// returns by it too. After the server resumes, the acquisitions that ran
// late hold nothing: the Backend (for Acquire) and lock.Acquire (for
// AcquireID) release the ids whose outcome was unknown, and a release that
// runs first retires the id (release.lua).
func TestStalledServerCallsEndByTheirDeadline(t *testing.T) {
	t.Parallel() // its own redis-server; mostly waiting on it
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	b := newBackend(t, srv.Client(t), prefix)
	backends := []*redisbackend.Backend{b}
	for _, disable := range []bool{false, true} {
		d, err := redisbackend.New(srv.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true }),
			&redisbackend.Options{Prefix: prefix, DisableCoalescing: disable})
		if err != nil {
			t.Fatal(err)
		}
		backends = append(backends, d)
	}
	ctx := context.Background()
	held, err := b.Acquire(ctx, "held", time.Minute)
	if err != nil {
		t.Fatal(err)
	}

	srv.Pause(t)
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			srv.Resume(t)
		}
	}
	t.Cleanup(resume)

	const n = 32
	const stall, deadline, slack = 10 * time.Second, time.Second, 500 * time.Millisecond
	type result struct {
		took time.Duration
		err  error
	}
	results := make([]result, n+1)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, deadline)
			defer cancel()
			start := time.Now()
			key := "k" + strconv.Itoa(i)
			b := backends[i/2%len(backends)]
			var err error
			if i%2 == 0 {
				_, err = b.Acquire(cctx, key, time.Minute)
			} else {
				_, err = lock.Acquire(cctx, b, key, lock.WithTTL(time.Minute))
			}
			results[i] = result{time.Since(start), err}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		cctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		start := time.Now()
		err := b.Release(cctx, held.ID)
		results[n] = result{time.Since(start), err}
	}()
	wg.Wait()
	for i, r := range results {
		if r.took > deadline+slack {
			t.Errorf("call %d returned after %v, want within %v", i, r.took, deadline+slack)
		}
		if c := lock.CodeOf(r.err); c != lock.CodeNetworkTimeout && c != lock.CodeAborted {
			t.Errorf("call %d: err %v, want NetworkTimeout or Aborted", i, r.err)
		}
		if !strings.Contains(r.err.Error(), "deadline") {
			t.Errorf("call %d: err %v does not say the deadline passed", i, r.err)
		}
	}

	time.Sleep(stall - deadline)
	resume()
	// The commands sent during the stall run now, and so do the releases
	// of the abandoned ids, before or after them: no key stays locked.
	raw := srv.Client(t)
	waitFor(t, 20*time.Second, func() string {
		for i := 0; i < n; i++ {
			if locked, err := b.IsLocked(ctx, "k"+strconv.Itoa(i)); err != nil || locked {
				v, _ := raw.Get(ctx, prefix+":k"+strconv.Itoa(i)).Result()
				return "k" + strconv.Itoa(i) + " still locked (" + errString(err) + "): " + v
			}
		}
		return ""
	})
}

// waitFor polls cond until it returns "" or timeout passes, then fails
// with cond's last message.
func waitFor(t *testing.T, timeout time.Duration, cond func() string) {
	t.Helper()
	end := time.Now().Add(timeout)
	for {
		msg := cond()
		if msg == "" {
			return
		}
		if time.Now().After(end) {
			t.Fatal(msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// TestStalledServerEveryContextKind: with Redis stopped (SIGSTOP), a call
// ends by its context's deadline or by the client's own bound, whichever
// comes first, for each kind of context users have: Background (jobs),
// cancellable without a deadline (net/http), a deadline before the
// client's bound (the call waits on a goroutine and returns at the
// deadline) and one after it (the call goes out from the caller's
// goroutine and go-redis ends it first). The client's timeouts are short
// (and one retry, not three) so that its bound is 1.3 s, not go-redis's
// 67 s: the test is about which of the two ends a call.
func TestStalledServerEveryContextKind(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) {
		o.ReadTimeout, o.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond
		o.DialTimeout, o.PoolTimeout = 200*time.Millisecond, 200*time.Millisecond
		o.MaxRetries, o.MaxRetryBackoff = 1, 100*time.Millisecond
	})
	b := newBackend(t, rdb, strings.TrimSuffix(redistest.Prefix(t), ":"))
	// The client's bound (docs/client-retries.md): 2 tries of the dial or
	// pool timeout, the write and the read timeout, and 1 backoff.
	const bound = 2*(200+200+200)*time.Millisecond + 100*time.Millisecond
	if _, err := b.Acquire(context.Background(), "warm", time.Second); err != nil {
		t.Fatal(err)
	}
	srv.Pause(t)
	defer srv.Resume(t)
	kinds := []struct {
		desc string
		ctx  func() (context.Context, context.CancelFunc)
		by   time.Duration
	}{
		{"Background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }, bound},
		{"cancellable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, bound},
		{"deadline before the bound", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}, 300 * time.Millisecond},
		{"deadline after the bound", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), bound+2*time.Second)
		}, bound},
	}
	for _, k := range kinds {
		t.Run(k.desc, func(t *testing.T) {
			ctx, cancel := k.ctx()
			defer cancel()
			start := time.Now()
			_, err := b.Acquire(ctx, "stalled-"+k.desc, time.Second)
			took := time.Since(start)
			if err == nil || errors.Is(err, lock.ErrLocked) {
				t.Errorf("Acquire on a stalled server = %v, want a failure", err)
			}
			if took > k.by+500*time.Millisecond {
				t.Errorf("Acquire took %v, want it to end by %v (+0.5 s)", took, k.by)
			}
		})
	}
}
