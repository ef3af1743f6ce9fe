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

func TestCompareLimits(t *testing.T) {
	s := func(fences ...string) sample {
		h := heldLimit{key: "pool", fences: map[lock.Fence]bool{}}
		for _, f := range fences {
			h.fences[lock.Fence(f)] = true
		}
		return sample{limits: map[string]heldLimit{"p:pool": h}}
	}
	for _, tc := range []struct {
		desc               string
		prev, cur          sample
		acquired, released int64
	}{
		{"nothing changed", s("1", "2"), s("1", "2"), 0, 0},
		{"one slot more", s("1"), s("1", "2"), 1, 0},
		{"one slot replaced", s("1", "2"), s("2", "3"), 1, 1},
		{"appeared", sample{}, s("1", "2"), 2, 0},
		{"vanished", s("1", "2"), sample{}, 0, 2},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			acq, rel, _ := compare(tc.prev, tc.cur, true)
			if acq != tc.acquired || rel != tc.released {
				t.Errorf("compare = %d acquired, %d released; want %d, %d", acq, rel, tc.acquired, tc.released)
			}
		})
	}
}

var watchLimitRe = regexp.MustCompile(`  limits (\d+) \((\d+) slots\)  acquired/s ([0-9.]+) .* busiest: (.*)$`)

// TestWatchLimit samples a limit whose 2 slots are held throughout while a
// third changes hands all the time.
func TestWatchLimit(t *testing.T) {
	srv := redistest.Shared(t)
	p := prefix(t)
	b := newBackend(t, srv.Client(t), redisbackend.Options{Prefix: p})
	ctx, cancel := context.WithCancel(context.Background())
	var (
		wg     sync.WaitGroup
		grants atomic.Int64
	)
	t.Cleanup(func() { cancel(); wg.Wait() })
	takeSlot(t, b, "pool", 3, time.Minute)
	takeSlot(t, b, "pool", 3, time.Minute)
	wg.Add(1)
	go func() {
		// A third slot changes hands every 10 ms or so: the next is taken
		// (with n = 4) before the last is released, so that every sample
		// sees one, and a new fence at each.
		defer wg.Done()
		var last lock.Lease
		for ctx.Err() == nil {
			id, _ := b.NewLockID("pool")
			l, err := b.AcquireSlot(ctx, "pool", id, 4, time.Minute)
			if err != nil {
				continue
			}
			if last.ID != "" {
				_ = b.Release(context.Background(), last.ID)
			}
			last = l
			grants.Add(1)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	for grants.Load() < 3 { // the third slot is changing hands
		time.Sleep(10 * time.Millisecond)
	}
	r := syncguard(t, "watch", "--redis", urlOf(srv), "--prefix", p, "--interval", "300ms", "--count", "2")
	out := lines(r.out)
	if r.code != 0 || len(out) != 3 {
		t.Fatalf("watch: status %d, stderr %q, output:\n%s", r.code, r.err, r.out)
	}
	for _, line := range out[1:] {
		m := watchLimitRe.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("watch line %q does not match %v", line, watchLimitRe)
		}
		slots, _ := strconv.Atoi(m[2])
		acquired, _ := strconv.ParseFloat(m[3], 64)
		if m[1] != "1" || slots < 3 || slots > 4 || acquired <= 0 || !strings.HasPrefix(m[4], "pool ") {
			t.Errorf("watch line %q: want 1 limit with 3 or 4 slots, its grants, pool the busiest", line)
		}
	}
}
