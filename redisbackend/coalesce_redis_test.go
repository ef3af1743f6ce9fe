package redisbackend_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// TestCoalescing holds the server still (SIGSTOP) while 16 goroutines
// acquire distinct keys: the first calls go out alone (two to eight, as the
// goroutines happen to start) and the others queue (the test waits until
// they have), then share one pipeline. With DisableCoalescing every call
// is a round trip of its own. Either way every caller gets its own lease.
func TestCoalescing(t *testing.T) {
	const callers = 16
	for _, tc := range []struct {
		desc    string
		disable bool
		trips   int64 // with coalescing, 1 + the calls that went out alone
	}{
		{desc: "coalesced", trips: 1},
		{desc: "disabled", disable: true, trips: callers},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := srv.Client(t, func(o *redis.Options) { o.PoolSize = callers })
			h := &scriptTrips{}
			rdb.AddHook(h)
			b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: redistest.Prefix(t), DisableCoalescing: tc.disable})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			// Load the scripts, so no NOSCRIPT resend muddles the count.
			warm, err := b.Acquire(ctx, "warm", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			trips, scripts := h.trips.Load(), h.scripts.Load()

			srv.Pause(t)
			leases := make([]lock.Lease, callers)
			errs := make([]error, callers)
			var wg sync.WaitGroup
			for i := range leases {
				wg.Add(1)
				go func() {
					defer wg.Done()
					leases[i], errs[i] = b.Acquire(ctx, "k"+strconv.Itoa(i), time.Minute)
				}()
			}
			// Every caller is on the wire or queued before the server wakes:
			// each round trip in flight carries one call alone.
			want := int64(callers)
			if !tc.disable {
				deadline := time.Now().Add(10 * time.Second)
				for redisbackend.QueuedCalls(b)+redisbackend.InFlightTrips(b) != callers && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				alone := redisbackend.InFlightTrips(b)
				if queued := redisbackend.QueuedCalls(b); queued+alone != callers || alone < 2 || alone > 8 {
					t.Fatalf("queued calls %d and round trips %d, want %d in all, 2 to 8 alone", queued, alone, callers)
				}
				want = tc.trips + int64(alone)
			}
			srv.Resume(t)
			wg.Wait()

			ids := map[string]bool{warm.ID: true}
			for i, l := range leases {
				if errs[i] != nil {
					t.Fatalf("acquire k%d: %v", i, errs[i])
				}
				if l.Key != "k"+strconv.Itoa(i) || ids[l.ID] || l.Fence != "000000000000001" {
					t.Errorf("acquire k%d: lease %+v, want its own key and id, fence 1", i, l)
				}
				ids[l.ID] = true
			}
			if got := h.scripts.Load() - scripts; got != callers {
				t.Errorf("scripts sent = %d, want %d", got, callers)
			}
			if got := h.trips.Load() - trips; got != want {
				t.Errorf("round trips = %d, want %d", got, want)
			}
			for _, l := range leases {
				if err := b.Release(ctx, l.ID); err != nil {
					t.Errorf("release %s: %v", l.Key, err)
				}
			}
		})
	}
}

// scriptTrips counts the round trips that carry scripts, and the scripts
// (the connection set-up commands of new connections are not counted).
type scriptTrips struct {
	trips, scripts atomic.Int64
}

func (h *scriptTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *scriptTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h *scriptTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.count(cmds)
		return next(ctx, cmds)
	}
}

func (h *scriptTrips) count(cmds []redis.Cmder) {
	n := int64(0)
	for _, c := range cmds {
		if name := c.Name(); name == "evalsha" || name == "eval" {
			n++
		}
	}
	if n > 0 {
		h.trips.Add(1)
		h.scripts.Add(n)
	}
}

// TestCoalescedNoScript flushes the script cache and sends concurrent
// calls: every one of them, pipelined or not, gets NOSCRIPT and is resent
// as EVAL.
func TestCoalescedNoScript(t *testing.T) {
	srv := redistest.Start(t)
	b, rdb, h := countedBackend(t, srv)
	ctx := context.Background()
	for round := 0; round < 3; round++ {
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		before := h.Commands.Load()
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := 0; g < 32; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := "r" + strconv.Itoa(round) + "g" + strconv.Itoa(g)
				l, err := b.Acquire(ctx, key, time.Minute)
				if err == nil {
					err = b.Release(ctx, l.ID)
				}
				if err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		if sent := h.Commands.Load() - before; sent <= 64 {
			t.Errorf("round %d: %d commands for 64 calls after the flush, want resends", round, sent)
		}
	}
}

// TestCoalescedServerDown: every caller of a shared pipeline gets the
// connection error, mapped like a lone call's.
func TestCoalescedServerDown(t *testing.T) {
	srv := redistest.Start(t)
	b, _, _ := countedBackend(t, srv, func(o *redis.Options) { o.DialerRetries, o.MaxRetries = 1, -1 })
	ctx := context.Background()
	if _, err := b.Acquire(ctx, "warm", time.Minute); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	var wg sync.WaitGroup
	codes := make(chan lock.Code, 32)
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.Acquire(ctx, "k"+strconv.Itoa(g), time.Minute)
			codes <- lock.CodeOf(err)
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != lock.CodeServiceUnavailable {
			t.Errorf("code = %v, want %v", c, lock.CodeServiceUnavailable)
		}
	}
}
