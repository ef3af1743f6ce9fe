package cli

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

var watchRe = regexp.MustCompile(`^\d\d:\d\d:\d\d  locks (\d+)  acquired/s ([0-9.]+)  released/s ([0-9.]+)  waiters (\d+)  busiest: (.*?)(?:; [0-9.]+/s on keys no sample saw held)?$`)

// TestWatch samples a key that changes hands all the time next to one
// that is held throughout, with a waiter queued.
func TestWatch(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	p := prefix(t)
	b := newBackend(t, rdb, redisbackend.Options{Prefix: p})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })

	if _, err := b.Acquire(ctx, "idle", time.Minute); err != nil {
		t.Fatal(err)
	}
	var cycles atomic.Int64
	wg.Add(2)
	go func() { // one waiter queued on "idle" throughout
		defer wg.Done()
		_, _ = lock.Acquire(ctx, b, "idle", lock.WithWait(time.Minute))
	}()
	go func() { // "hot" changes hands every 10 ms or so, and is held most of the time
		defer wg.Done()
		for ctx.Err() == nil {
			l, err := b.Acquire(ctx, "hot", time.Minute)
			if err != nil {
				continue
			}
			// Short, so that even a machine loaded enough to stretch each
			// cycle tenfold makes well over the 10 grants a second below
			// (a watch that only counted the holders it sampled would see
			// at most 1 per 300ms sample, 3.3 a second); long next to the
			// moment the key is free between a release and the next
			// acquisition, at which a sample may find it.
			time.Sleep(10 * time.Millisecond)
			_ = b.Release(context.Background(), l.ID)
			cycles.Add(1)
		}
	}()
	// Both under way before the first sample (a slow start, under -race,
	// made the first line see the hot key's first grant only, or no
	// waiter yet).
	deadline := time.Now().Add(10 * time.Second)
	for cycles.Load() < 5 || len(rdb.Keys(ctx, p+":queue:*").Val()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %d hot cycles, waiter queued: %v", cycles.Load(), rdb.Keys(ctx, p+":queue:*").Val())
		}
		time.Sleep(5 * time.Millisecond)
	}

	r := syncguard(t, "watch", "--redis", urlOf(srv), "--prefix", p, "--interval", "300ms", "--count", "3")
	out := lines(r.out)
	if r.code != 0 || len(out) != 4 || !strings.HasPrefix(out[0], "watching "+p+":* every 300ms") {
		t.Fatalf("watch: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
	}
	for i, line := range out[1:] {
		m := watchRe.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("watch line %q does not match %v", line, watchRe)
		}
		if i < 2 {
			// A key free at every sample so far (caught between a release
			// and the next acquisition) is new to the next one, which
			// counts it once: only the last line is sure to know it.
			continue
		}
		acquired, _ := strconv.ParseFloat(m[2], 64)
		// Hundreds of grants a second: with a counter per key the fence
		// difference counts them all, not only the holders sampled.
		if acquired < 10 || !strings.HasPrefix(m[5], "hot ") || m[4] != "1" || !strings.HasSuffix(m[5], ", idle 0.0/s (1 waiting)") {
			t.Errorf("watch line %q: want the hot key's grants (tens a second), then the idle key's waiter", line)
		}
	}
}

// TestWatchEndsOnSignal checks that a watch without --count ends, with
// status 0, when its context is cancelled (as main's is on SIGINT or
// SIGTERM).
func TestWatchEndsOnSignal(t *testing.T) {
	srv := redistest.Shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	r := syncguardCtx(ctx, Env{}, "watch", "--redis", urlOf(srv), "--prefix", prefix(t), "--interval", "100ms")
	if d := time.Since(start); r.code != 0 || d > 3*time.Second {
		t.Errorf("watch after cancel: status %d after %v, stderr %q", r.code, d, r.err)
	}
	if n := len(lines(r.out)); n < 2 {
		t.Errorf("watch printed %d lines in 500ms at 100ms intervals:\n%s", n, r.out)
	}
}

func TestCompare(t *testing.T) {
	gone := func(s sample, key, counter string) sample {
		s.gone = map[string]gone{key: {key: key, counter: lock.Fence(counter)}}
		return s
	}
	// ids gives cur the new lock ids of a sample: n in all, those of held
	// keys by key.
	ids := func(cur sample, n int64, byKey map[string]int64) sample {
		cur.idsCounted, cur.grants, cur.byLock = true, n, map[string]idGrants{}
		for k, m := range byKey {
			cur.byLock[k] = idGrants{key: k, n: m}
		}
		return cur
	}
	s := func(nowMs int64, fences map[string]string) sample {
		m := map[string]held{}
		for k, f := range fences {
			m[k] = held{key: k, fence: lock.Fence(f)}
		}
		return sample{nowMs: nowMs, locks: m}
	}
	for _, tc := range []struct {
		desc               string
		prev, cur          sample
		perKey             bool
		acquired, released int64
	}{
		{"nothing changed", s(0, map[string]string{"a": "000000000000001"}), s(1000, map[string]string{"a": "000000000000001"}), true, 0, 0},
		{"acquired", s(0, nil), s(1000, map[string]string{"a": "000000000000001"}), true, 1, 0},
		{"released", s(0, map[string]string{"a": "000000000000001"}), s(1000, nil), true, 0, 1},
		{"per-key fences count the grants between", s(0, map[string]string{"a": "000000000000001"}), s(1000, map[string]string{"a": "000000000000005"}), true, 4, 4},
		{"striped fences count one", s(0, map[string]string{"a": "001700000000000"}), s(1000, map[string]string{"a": "001700000000900"}), false, 1, 1},
		{"vanished: the counter counts the grants since", s(0, map[string]string{"a": "000000000000001"}), gone(s(1000, nil), "a", "000000000000005"), true, 4, 5},
		{"back: the fence counts the grants since it vanished", gone(s(0, nil), "a", "000000000000005"), s(1000, map[string]string{"a": "000000000000008"}), true, 3, 2},
		{"back, striped", gone(s(0, nil), "a", "000000000000005"), s(1000, map[string]string{"a": "000000000000008"}), false, 1, 0},
		{"free at both samples: the counter counts the grants between", gone(s(0, nil), "a", "000000000000005"), gone(s(1000, nil), "a", "000000000000009"), true, 4, 4},
		{"free at both samples, nothing happened", gone(s(0, nil), "a", "000000000000005"), gone(s(1000, nil), "a", "000000000000005"), true, 0, 0},
		// The new lock ids count the grants no fence shows.
		{"new lock ids of leases that came and went, striped", s(0, nil), ids(s(1000, nil), 7, nil), false, 7, 7},
		{"new lock ids of leases that came and went, per key", s(0, nil), ids(s(1000, nil), 7, nil), true, 7, 7},
		{"new lock ids and a held key", s(0, map[string]string{"a": "001700000000000"}),
			ids(s(1000, map[string]string{"a": "001700000000900"}), 3, map[string]int64{"a": 1}), false, 3, 3},
		{"fences count more than the new lock ids", s(0, map[string]string{"a": "000000000000001"}),
			ids(s(1000, map[string]string{"a": "000000000000009"}), 2, map[string]int64{"a": 1}), true, 8, 8},
		{"no previous sample of lock ids", s(0, nil), func() sample { c := ids(s(1000, nil), 7, nil); c.idsCounted = false; return c }(), false, 0, 0},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			acq, rel, _ := compare(tc.prev, tc.cur, tc.perKey)
			if acq != tc.acquired || rel != tc.released {
				t.Errorf("compare = %d acquired, %d released; want %d, %d", acq, rel, tc.acquired, tc.released)
			}
		})
	}
}

// TestWatchIndexValue: what a new index key's value says about its grant.
func TestWatchIndexValue(t *testing.T) {
	n := namer{prefix: "p"}
	for _, tc := range []struct {
		v, lockKey, key string
		granted         bool
	}{
		{"p:invoice:42", "p:invoice:42", "", true}, // a held lease
		{"\x001:abc1", "", "", true},               // released since its grant
		{"\x00-2:", "", "", true},                  // found expired
		{"\x00-1:abc2", "", "", false},             // a release of an unknown lock id
		{"\x01000000000000003 1700000000000 2 6 p:pool" + "pool", "p:pool", "pool", true}, // a slot
		{"\x01broken", "", "", false},
		{"q:other", "", "", false}, // not this prefix's
	} {
		lk, key, granted := n.indexValue(tc.v)
		if lk != tc.lockKey || key != tc.key || granted != tc.granted {
			t.Errorf("indexValue(%q) = %q, %q, %v; want %q, %q, %v", tc.v, lk, key, granted, tc.lockKey, tc.key, tc.granted)
		}
	}
}
