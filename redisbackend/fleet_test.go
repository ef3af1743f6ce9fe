package redisbackend_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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

// The fleet test runs this test binary as worker processes: TestMain calls
// fleetWorker first, which runs one and exits when the environment asks
// for a worker.
const (
	fleetAddrEnv   = "SYNCGUARD_FLEET_WORKER_ADDR"
	fleetPrefixEnv = "SYNCGUARD_FLEET_WORKER_PREFIX"
	fleetRoundsEnv = "SYNCGUARD_FLEET_WORKER_ROUNDS"
	fleetLimitEnv  = "SYNCGUARD_FLEET_WORKER_LIMIT" // a slot among n (lock.WithLimit) instead of the lock
	// fleetGoroutinesEnv runs that many goroutines on the worker's one
	// Backend, rounds each (default 1).
	fleetGoroutinesEnv = "SYNCGUARD_FLEET_WORKER_GOROUTINES"
	// fleetWaiterEnv makes the worker one waiter (waiterWorker) named by
	// its value.
	fleetWaiterEnv = "SYNCGUARD_FLEET_WORKER_WAITER"
)

// fleetWorker, in a worker process, takes the hot key rounds times with
// lock.Acquire on a Backend of its own (go-redis's default options) and,
// inside the critical section, INCRs and DECRs a counter on the server: a
// value other than 1 after the INCR means two holders at once. With a
// limit n (fleetLimitEnv) it takes a slot among n instead, holds it 1ms,
// and a value above n is the violation. With fleetGoroutinesEnv, that
// many goroutines share the Backend. It prints "ok <highest value seen>
// <longest Acquire in ms>" or the violations and exits. Rounds -1 runs
// until the key "<prefix>:stop" exists.
func fleetWorker() {
	addr := os.Getenv(fleetAddrEnv)
	if addr == "" {
		return
	}
	if name := os.Getenv(fleetWaiterEnv); name != "" {
		waiterWorker(addr, name)
	}
	rounds, _ := strconv.Atoi(os.Getenv(fleetRoundsEnv))
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: os.Getenv(fleetPrefixEnv)})
	if err != nil {
		fmt.Println("New:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	counter := os.Getenv(fleetPrefixEnv) + ":inside"
	opts := []lock.Option{lock.WithTTL(10 * time.Second), lock.WithWait(30 * time.Second)}
	limit, _ := strconv.Atoi(os.Getenv(fleetLimitEnv))
	if limit > 0 {
		opts = append(opts, lock.WithLimit(limit))
	}
	goroutines, _ := strconv.Atoi(os.Getenv(fleetGoroutinesEnv))
	var (
		mu        sync.Mutex
		bad       int
		peak      int64
		longest   time.Duration
		wg        sync.WaitGroup
		stop      = os.Getenv(fleetPrefixEnv) + ":stop"
		exitAfter = func(code int, msg ...any) { fmt.Println(msg...); os.Exit(code) }
	)
	for range max(goroutines, 1) {
		wg.Go(func() {
			for i := 0; rounds < 0 || i < rounds; i++ {
				if rounds < 0 && rdb.Exists(ctx, stop).Val() == 1 {
					break
				}
				start := time.Now()
				l, err := lock.Acquire(ctx, b, "hot", opts...)
				if err != nil {
					exitAfter(2, "Acquire:", err)
				}
				took := time.Since(start)
				n := rdb.Incr(ctx, counter).Val()
				mu.Lock()
				if n > int64(max(limit, 1)) {
					bad++
				}
				peak, longest = max(peak, n), max(longest, took)
				mu.Unlock()
				if limit > 0 {
					time.Sleep(time.Millisecond)
				}
				rdb.Decr(ctx, counter)
				if err := b.Release(ctx, l.ID); err != nil {
					exitAfter(2, "Release:", err)
				}
			}
		})
	}
	wg.Wait()
	_ = b.Close()
	if bad > 0 {
		fmt.Println("overlaps:", bad)
		os.Exit(1)
	}
	fmt.Println("ok", peak, longest.Milliseconds())
	os.Exit(0)
}

// waiterWorker, in a worker process, waits once for the key "hot" with
// lock.Acquire (polling only every 3s, so it gets the lock from a
// hand-off), and when it has it appends name to the list "<prefix>:order",
// releases and exits.
func waiterWorker(addr, name string) {
	prefix := os.Getenv(fleetPrefixEnv)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: prefix})
	if err != nil {
		fmt.Println("New:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	l, err := lock.Acquire(ctx, b, "hot", lock.WithTTL(10*time.Second), lock.WithWait(30*time.Second),
		lock.WithRetry(lock.Retry{BaseDelay: 3 * time.Second, Fixed: true, NoJitter: true}))
	if err != nil {
		fmt.Println("Acquire:", err)
		os.Exit(2)
	}
	rdb.RPush(ctx, prefix+":order", name)
	if err := b.Release(ctx, l.ID); err != nil {
		fmt.Println("Release:", err)
		os.Exit(2)
	}
	_ = b.Close()
	os.Exit(0)
}

// startWaiter starts a waiterWorker process named name and returns once
// its entry makes the hot key's queue queued entries long.
func startWaiter(t *testing.T, srv *redistest.Server, prefix, name string, queued int64) *exec.Cmd {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), fleetAddrEnv+"="+srv.Addr(), fleetPrefixEnv+"="+prefix, fleetWaiterEnv+"="+name)
	out := &strings.Builder{}
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	rdb := srv.Client(t)
	queue := prefix + ":queue:" + prefix + ":hot"
	waitFor(t, 10*time.Second, func() string {
		if n := rdb.ZCard(context.Background(), queue).Val(); n != queued {
			return fmt.Sprintf("waiter %s: the queue has %d entries, want %d (output %q)", name, n, queued, out)
		}
		return ""
	})
	return c
}

// holdHot starts a server and takes the key "hot" on a Backend of its own
// (prefix is the fleet's) for a minute.
func holdHot(t *testing.T) (*redistest.Server, string, *redisbackend.Backend, lock.Lease) {
	t.Helper()
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	b, err := redisbackend.New(srv.Client(t), &redisbackend.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	l, err := b.Acquire(context.Background(), "hot", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return srv, prefix, b, l
}

// TestFleetFIFO: waiters in six OS processes, queued one after another
// on a held key, get it in the order they queued.
func TestFleetFIFO(t *testing.T) {
	srv, prefix, b, l := holdHot(t)
	ctx := context.Background()
	const n = 6
	var want []string
	var procs []*exec.Cmd
	for i := range n {
		name := "w" + strconv.Itoa(i)
		want = append(want, name)
		procs = append(procs, startWaiter(t, srv, prefix, name, int64(i+1)))
	}
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	for i, c := range procs {
		if err := c.Wait(); err != nil {
			t.Fatalf("waiter %d: %v", i, err)
		}
	}
	got := srv.Client(t).LRange(ctx, prefix+":order", 0, -1).Val()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("grant order %v, want %v", got, want)
	}
}

// TestFleetKilledWaiter: a waiter whose process is killed (SIGKILL) while
// queued first in line does not hold up the queue: the release hands the
// lock to the next live waiter at once (the dead process's subscription
// went with it, so its entry is dropped).
func TestFleetKilledWaiter(t *testing.T) {
	srv, prefix, b, l := holdHot(t)
	ctx := context.Background()
	dead := startWaiter(t, srv, prefix, "dead", 1)
	if err := dead.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = dead.Wait()
	live := startWaiter(t, srv, prefix, "live", 2)
	if err := b.Release(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	rdb := srv.Client(t)
	waitFor(t, 2*time.Second, func() string {
		if got := rdb.LRange(ctx, prefix+":order", 0, -1).Val(); strings.Join(got, " ") != "live" {
			return fmt.Sprintf("grants %v, want [live] within 2s of the release (the waiter polls every 3s): the killed waiter's entry held up the queue", got)
		}
		return ""
	})
	if err := live.Wait(); err != nil {
		t.Fatalf("live waiter: %v", err)
	}
}

// TestFleetMutualExclusion: 4 OS processes, each a Backend on its own
// client, take one hot key 150 times each with no pause between a release
// and the next acquisition (hand-offs through the queue, across
// processes): never two holders at once, every acquisition within its
// wait, and the grants spread over the processes.
func TestFleetMutualExclusion(t *testing.T) {
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	const procs, rounds = 4, 150
	runFleet(t, srv, prefix, procs, rounds, 0)
	checkFleetEnd(t, srv, prefix, procs*rounds)
}

// checkFleetEnd checks the server after a fleet run of grants
// acquisitions: one fence per grant, the hot key free, and hand-offs
// published (the workers queued).
func checkFleetEnd(t *testing.T, srv *redistest.Server, prefix string, grants int) {
	t.Helper()
	rdb := srv.Client(t)
	ctx := context.Background()
	fence := rdb.Get(ctx, prefix+":fence:"+prefix+":hot").Val()
	if fence != strconv.Itoa(grants) {
		t.Errorf("fence counter %q, want %d (one per grant)", fence, grants)
	}
	if n := rdb.Exists(ctx, prefix+":hot").Val(); n != 0 {
		t.Error("the hot key is still held after every worker released")
	}
	if stats := rdb.Info(ctx, "commandstats").Val(); !strings.Contains(stats, "cmdstat_publish:") {
		t.Error("no hand-off was published: the workers never queued")
	}
}

// runFleet runs procs worker processes of rounds acquisitions each (slots
// among limit when limit > 0) and returns the highest number of holders
// any of them saw at once.
func runFleet(t *testing.T, srv *redistest.Server, prefix string, procs, rounds, limit int) int {
	t.Helper()
	return startFleet(t, srv, prefix, procs, rounds, limit)()
}

// startFleet starts runFleet's workers and returns the function that
// waits for them and returns the peak.
func startFleet(t *testing.T, srv *redistest.Server, prefix string, procs, rounds, limit int) (wait func() int) {
	t.Helper()
	return startFleetOf(t, srv, prefix, procs, 1, rounds, limit)
}

// startFleetOf is startFleet with goroutines goroutines per worker
// process, rounds each.
func startFleetOf(t *testing.T, srv *redistest.Server, prefix string, procs, goroutines, rounds, limit int) (wait func() int) {
	t.Helper()
	cmds := make([]*exec.Cmd, procs)
	outs := make([]*strings.Builder, procs)
	for i := range cmds {
		outs[i] = &strings.Builder{}
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), fleetAddrEnv+"="+srv.Addr(), fleetPrefixEnv+"="+prefix,
			fleetRoundsEnv+"="+strconv.Itoa(rounds), fleetLimitEnv+"="+strconv.Itoa(limit),
			fleetGoroutinesEnv+"="+strconv.Itoa(goroutines))
		c.Stdout, c.Stderr = outs[i], outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = c
	}
	return func() int {
		t.Helper()
		peak := 0
		for i, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Errorf("worker %d: %v: %s", i, err, outs[i])
				continue
			}
			var p int
			if _, err := fmt.Sscanf(outs[i].String(), "ok %d", &p); err != nil {
				t.Errorf("worker %d said %q", i, outs[i])
			}
			peak = max(peak, p)
		}
		return peak
	}
}

// TestFleetLocality: 3 OS processes x 3 goroutines, each goroutine on its
// process's one Backend, take the hot key 60 times each with no pause
// between a release and the next acquisition (Options.HandOffLocality at
// its default): never two holders at once, every acquisition within its
// wait, one fence per grant, and most hand-offs made in the releasing
// process (fewer messages than grants), some across processes.
func TestFleetLocality(t *testing.T) {
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	const procs, goroutines, rounds = 3, 3, 60
	if peak := startFleetOf(t, srv, prefix, procs, goroutines, rounds, 0)(); peak != 1 {
		t.Errorf("at most %d holders were seen at once, want 1", peak)
	}
	checkFleetEnd(t, srv, prefix, procs*goroutines*rounds)
	stats := srv.Client(t).Info(context.Background(), "commandstats").Val()
	var published int64
	if i := strings.Index(stats, "cmdstat_publish:calls="); i >= 0 {
		_, _ = fmt.Sscanf(stats[i+len("cmdstat_publish:calls="):], "%d", &published)
	}
	grants := int64(procs * goroutines * rounds)
	t.Logf("%d hand-off messages for %d grants", published, grants)
	if published*2 > grants {
		t.Errorf("%d hand-off messages for %d grants: want most hand-offs made in the releasing process", published, grants)
	}
}

// TestFleetLimit: 4 OS processes take slots of one key among 2, 100 times
// each, holding each 1ms: never more than 2 holders at once, both slots
// used, and every acquisition within its wait (hand-offs of freed slots
// across processes).
func TestFleetLimit(t *testing.T) {
	srv := redistest.Start(t)
	prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
	const procs, rounds, limit = 4, 100, 2
	if peak := runFleet(t, srv, prefix, procs, rounds, limit); peak != limit {
		t.Errorf("at most %d holders were seen at once, want %d", peak, limit)
	}
	checkFleetEnd(t, srv, prefix, procs*rounds)
}

// TestFleetFaults: TestFleetMutualExclusion's 4 processes, and the limit's,
// while the server is stopped (SIGSTOP) for 700ms, twice, and the hand-off
// subscriptions are killed (CLIENT KILL TYPE pubsub) in between, each fault
// once the workers have made 40 more grants: hand-offs are lost or
// delayed, waiters fall back to polling and resubscribe, and still no two
// holders (no three with limit 2) overlap and every worker finishes
// within its waits.
func TestFleetFaults(t *testing.T) {
	t.Parallel() // its own redis-server; mostly waiting on it
	for _, limit := range []int{0, 2} {
		t.Run("limit="+strconv.Itoa(limit), func(t *testing.T) {
			srv := redistest.Start(t)
			prefix := strings.TrimSuffix(redistest.Prefix(t), ":")
			admin := srv.Client(t)
			ctx := context.Background()
			fenceKey := prefix + ":fence:" + prefix + ":hot"
			wait := startFleet(t, srv, prefix, 4, -1, limit)
			grants := int64(0)
			progress := func() {
				t.Helper()
				target := grants + 40
				waitFor(t, 30*time.Second, func() string {
					if grants, _ = admin.Get(ctx, fenceKey).Int64(); grants < target {
						return fmt.Sprintf("the workers made %d grants in 30s, want %d", grants, target)
					}
					return ""
				})
			}
			progress()
			srv.Pause(t)
			time.Sleep(700 * time.Millisecond)
			srv.Resume(t)
			progress()
			admin.Do(ctx, "client", "kill", "type", "pubsub")
			progress()
			srv.Pause(t)
			time.Sleep(700 * time.Millisecond)
			srv.Resume(t)
			progress()
			admin.Set(ctx, prefix+":stop", 1, 0)
			if peak := wait(); limit > 0 && peak != limit {
				t.Errorf("at most %d holders were seen at once, want %d", peak, limit)
			}
		})
	}
}
