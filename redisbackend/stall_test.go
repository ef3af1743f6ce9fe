package redisbackend_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/redistest"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// TestStalledServerCallsEndByTheirDeadline: Redis SIGSTOPped for 10 s
// under 32 concurrent acquisitions with a 1 s deadline, on a client with
// go-redis's default options (3 s read timeout, 3 retries, no context
// timeouts) and coalescing on, and on two more instances whose clients
// set ContextTimeoutEnabled, so that calls are sent from their callers'
// goroutines and go-redis ends them at the deadline (Features.DirectCalls;
// one with coalescing on, where the first 4 calls go that way and the rest
// queue, one with it off): every call returns within 1.5 s, with
// CodeNetworkTimeout (on the wire, outcome unknown) or CodeAborted (still
// queued), matching context.DeadlineExceeded. A Release with a deadline
// returns by it too. After the server resumes, the acquisitions that ran
// late hold nothing: the Backend (for Acquire) and lock.Acquire (for
// AcquireID) release the ids whose outcome was unknown, and a release that
// runs first retires the id (release.lua).
func TestStalledServerCallsEndByTheirDeadline(t *testing.T) {
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
		if !d.Features().DirectCalls.On {
			t.Fatalf("direct calls off: %s", d.Features())
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
