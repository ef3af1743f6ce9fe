package asynqlock_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/internal/testkit/redistest"
	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/redisbackend"
)

// The scheduler fleet test runs this test binary as replica processes:
// TestMain calls schedReplica first, which runs one and exits when the
// environment asks for a replica.
const (
	schedAddrEnv   = "SYNCGUARD_SCHED_REPLICA_ADDR"
	schedPrefixEnv = "SYNCGUARD_SCHED_REPLICA_PREFIX"
	schedQueueEnv  = "SYNCGUARD_SCHED_REPLICA_QUEUE"
	schedNameEnv   = "SYNCGUARD_SCHED_REPLICA_NAME"
	schedTTLEnv    = "SYNCGUARD_SCHED_REPLICA_TTL"
	// schedSoakEnv, a duration, makes TestSchedulerFleet repeat its faults
	// for that long (make chaos sets it).
	schedSoakEnv = "SYNCGUARD_SCHED_SOAK"
)

// schedKey is the election key of the fleet.
const schedKey = "sched"

// schedReplica, in a replica process, runs a Scheduler with one entry,
// "@every 1s", on clients of its own (go-redis's default options) until
// SIGTERM, and prints a line per tick it tried:
// "tick <fence> <scheduled time> <ok|conflict|error> <catch-up> <wall clock in ns>".
func schedReplica() {
	addr := os.Getenv(schedAddrEnv)
	if addr == "" {
		return
	}
	fail := func(msg ...any) { fmt.Println(msg...); os.Exit(2) }
	b, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: addr}),
		&redisbackend.Options{Prefix: os.Getenv(schedPrefixEnv)})
	if err != nil {
		fail("redisbackend.New:", err)
	}
	ttl, err := time.ParseDuration(os.Getenv(schedTTLEnv))
	if err != nil {
		fail("ttl:", err)
	}
	client := asynq.NewClientFromRedisClient(redis.NewClient(&redis.Options{Addr: addr}))
	s, err := asynqlock.NewScheduler(client, b, schedKey, os.Getenv(schedNameEnv), lock.WithTTL(ttl))
	if err != nil {
		fail("NewScheduler:", err)
	}
	if _, err := s.Register("@every 1s", asynq.NewTask("tick", nil), asynq.Queue(os.Getenv(schedQueueEnv))); err != nil {
		fail("Register:", err)
	}
	var mu sync.Mutex
	s.OnTick(func(tk asynqlock.Tick) {
		status := "ok"
		switch {
		case errors.Is(tk.Err, asynq.ErrTaskIDConflict):
			status = "conflict"
		case tk.Err != nil:
			status = "error"
		}
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf("tick %s %s %s %t %d\n", tk.Fence, tk.At.Format(time.RFC3339), status, tk.CatchUp, time.Now().UnixNano())
	})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := s.Run(ctx); err != nil {
		fail("Run:", err)
	}
	os.Exit(0)
}

// schedEvent is one line of a replica.
type schedEvent struct {
	replica string
	fence   lock.Fence
	at      time.Time
	status  string
	catchUp bool
	wall    time.Time // when the replica had the enqueue's answer
}

// schedFleet is the test's replica processes on one server.
type schedFleet struct {
	t      testing.TB
	addr   string
	prefix string
	queue  string
	ttl    time.Duration

	mu     sync.Mutex
	events []schedEvent
	procs  map[string]*exec.Cmd
	n      int
	wg     sync.WaitGroup
}

// start starts one more replica.
func (f *schedFleet) start() {
	f.t.Helper()
	f.mu.Lock()
	f.n++
	name := "replica-" + strconv.Itoa(f.n)
	f.mu.Unlock()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), schedAddrEnv+"="+f.addr, schedPrefixEnv+"="+f.prefix,
		schedQueueEnv+"="+f.queue, schedNameEnv+"="+name, schedTTLEnv+"="+f.ttl.String())
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = c.Process.Signal(syscall.SIGCONT); _ = c.Process.Kill() })
	f.mu.Lock()
	f.procs[name] = c
	f.mu.Unlock()
	f.wg.Go(func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.line(name, sc.Text())
		}
		_ = c.Wait()
	})
}

// line records a replica's line.
func (f *schedFleet) line(name, line string) {
	var fence, at, status, catchUp string
	var wall int64
	if _, err := fmt.Sscanf(line, "tick %s %s %s %s %d", &fence, &at, &status, &catchUp, &wall); err != nil {
		f.t.Errorf("%s: %s", name, line)
		return
	}
	when, err := time.Parse(time.RFC3339, at)
	if err != nil {
		f.t.Errorf("%s: %s: %v", name, line, err)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, schedEvent{name, lock.Fence(fence), when, status, catchUp == "true", time.Unix(0, wall)})
}

// leader returns the replica of the newest term that enqueued a tick.
func (f *schedFleet) leader() (string, lock.Fence) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var name string
	var fence lock.Fence
	for _, ev := range f.events {
		if ev.status == "ok" && (fence == "" || ev.fence.Compare(fence) > 0) {
			name, fence = ev.replica, ev.fence
		}
	}
	return name, fence
}

// waitTerm waits until a term newer than after enqueued a tick.
func (f *schedFleet) waitTerm(after lock.Fence, timeout time.Duration) (string, lock.Fence) {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		name, fence := f.leader()
		if fence != "" && (after == "" || fence.Compare(after) > 0) {
			return name, fence
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("no term after fence %q enqueued a tick within %v", after, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fault kills (SIGKILL), stops (SIGTERM: Run returns and hands the term
// over) or stalls (SIGSTOP past the TTL, then SIGCONT) the leader's
// process, and returns once a newer term enqueued a tick.
func (f *schedFleet) fault(kind string) {
	f.t.Helper()
	name, fence := f.leader()
	f.mu.Lock()
	c := f.procs[name]
	f.mu.Unlock()
	f.t.Logf("%s the leader %s (term %s)", kind, name, fence)
	switch kind {
	case "kill":
		_ = c.Process.Kill()
		f.start() // three replicas again
		f.waitTerm(fence, f.ttl+10*time.Second)
	case "resign":
		_ = c.Process.Signal(syscall.SIGTERM)
		f.start()
		f.waitTerm(fence, 10*time.Second)
	case "stall":
		_ = c.Process.Signal(syscall.SIGSTOP)
		f.waitTerm(fence, f.ttl+10*time.Second) // its lease expired: the stall outlived the TTL
		time.Sleep(500 * time.Millisecond)
		_ = c.Process.Signal(syscall.SIGCONT) // it wakes believing it leads
	}
}

// TestSchedulerFleet: three replica processes run a Scheduler with an
// "@every 1s" entry and a 2s TTL; the leader is killed twice, stopped
// once (its term handed over at once) and stalled past its TTL once
// (repeated for SYNCGUARD_SCHED_SOAK when set). Every
// tick's task is in the queue once (counted by scheduled time, nothing
// consumes them), enqueued by exactly one replica, and no two enqueued
// ticks are more than TTL plus one period apart.
func TestSchedulerFleet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := &schedFleet{t: t, addr: e.redis.Addr(), prefix: strings.TrimSuffix(redistest.Prefix(t), ":"),
		queue: e.queue, ttl: 2 * time.Second, procs: map[string]*exec.Cmd{}}
	for range 3 {
		f.start()
	}
	f.waitTerm("", 15*time.Second)
	soak, _ := time.ParseDuration(os.Getenv(schedSoakEnv))
	end := time.Now().Add(soak)
	for first := true; first || time.Now().Before(end); first = false {
		for _, kind := range []string{"kill", "resign", "kill", "stall"} {
			time.Sleep(1500 * time.Millisecond)
			f.fault(kind)
		}
	}
	time.Sleep(2 * time.Second) // the stalled replica has woken and acted
	f.mu.Lock()
	for _, c := range f.procs {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	f.mu.Unlock()
	f.wg.Wait()
	checkTicks(t, e, f)
}

// checkTicks compares the queue with what the replicas reported.
func checkTicks(t *testing.T, e *env, f *schedFleet) {
	t.Helper()
	tasks, err := e.insp.ListPendingTasks(e.queue, asynq.PageSize(10000))
	if err != nil {
		t.Fatal(err)
	}
	inQueue := map[time.Time]int{}
	for _, ti := range tasks {
		parts := strings.SplitN(ti.ID, ":", 4)
		at, err := time.Parse(time.RFC3339, parts[len(parts)-1])
		if err != nil {
			t.Fatalf("task id %q: %v", ti.ID, err)
		}
		inQueue[at]++
	}
	reported := map[time.Time][]string{}
	terms := map[lock.Fence]bool{}
	conflicts, catchUps, failed := 0, 0, 0
	for _, ev := range f.events {
		switch ev.status {
		case "ok":
			reported[ev.at] = append(reported[ev.at], ev.replica+"/"+string(ev.fence))
			terms[ev.fence] = true
			if ev.catchUp {
				catchUps++
			}
		case "conflict":
			conflicts++
		default:
			failed++
		}
	}
	var times []time.Time
	for at, n := range inQueue {
		times = append(times, at)
		if n != 1 {
			t.Errorf("tick %v: %d tasks in the queue, want 1", at.Format(time.TimeOnly), n)
		}
		if len(reported[at]) != 1 {
			t.Errorf("tick %v: enqueued by %v, want exactly one replica", at.Format(time.TimeOnly), reported[at])
		}
	}
	for at, by := range reported {
		if inQueue[at] == 0 {
			t.Errorf("tick %v: enqueued by %v but not in the queue", at.Format(time.TimeOnly), by)
		}
	}
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	maxGap := time.Duration(0)
	for i := 1; i < len(times); i++ {
		gap := times[i].Sub(times[i-1])
		maxGap = max(maxGap, gap)
		if gap > f.ttl+time.Second {
			t.Errorf("no tick from %v to %v (%v), want at most TTL + one period (%v)",
				times[i-1].Format(time.TimeOnly), times[i].Format(time.TimeOnly), gap, f.ttl+time.Second)
		}
	}
	t.Logf("%d ticks in the queue over %d terms, %d catch-ups, %d conflicts, %d failed enqueues, longest gap %v",
		len(times), len(terms), catchUps, conflicts, failed, maxGap)
	if len(terms) < 5 {
		t.Errorf("%d terms enqueued ticks, want at least 5 (one per fault and the first)", len(terms))
	}
}

// firstAttempt returns when the first term newer than after had the answer
// of its first enqueue (enqueued or already enqueued).
func (f *schedFleet) firstAttempt(after lock.Fence, timeout time.Duration) time.Time {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		f.mu.Lock()
		var first time.Time
		for _, ev := range f.events {
			if ev.status != "error" && ev.fence.Compare(after) > 0 && (first.IsZero() || ev.wall.Before(first)) {
				first = ev.wall
			}
		}
		f.mu.Unlock()
		if !first.IsZero() {
			return first
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("no term after fence %q tried a tick within %v", after, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkSchedulerFailover measures the failover time of a Scheduler:
// from the signal to the leader's process to the first enqueue of the
// next term, over 20 failovers of three replica processes (2s TTL), and
// reports its p50 and p99 (run it with -benchtime 1x; bench/README.md has
// the figures). kill is SIGKILL (the term ends with its lease), resign is
// SIGTERM (Run returns and hands the term over).
func BenchmarkSchedulerFailover(b *testing.B) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		name := map[syscall.Signal]string{syscall.SIGKILL: "kill", syscall.SIGTERM: "resign"}[sig]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				schedFailover(b, sig, name, 20)
			}
		})
	}
}

// schedFailover signals the leader of three replica processes n times,
// each at a random point of its heartbeat, and reports the failover
// times' p50 and p99.
func schedFailover(b *testing.B, sig syscall.Signal, name string, n int) {
	e := newEnv(b)
	f := &schedFleet{t: b, addr: e.redis.Addr(), prefix: strings.TrimSuffix(redistest.Prefix(b), ":"),
		queue: e.queue, ttl: 2 * time.Second, procs: map[string]*exec.Cmd{}}
	for range 3 {
		f.start()
	}
	f.waitTerm("", 15*time.Second)
	var took []time.Duration
	for range n {
		time.Sleep(500*time.Millisecond + rand.N(time.Second))
		leader, fence := f.leader()
		f.mu.Lock()
		c := f.procs[leader]
		f.mu.Unlock()
		signalled := time.Now()
		_ = c.Process.Signal(sig)
		f.start()
		took = append(took, f.firstAttempt(fence, 15*time.Second).Sub(signalled))
		f.waitTerm(fence, 15*time.Second)
	}
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[(len(took)*99+99)/100-1]
	b.ReportMetric(float64(p50.Milliseconds()), "p50-ms")
	b.ReportMetric(float64(p99.Milliseconds()), "p99-ms")
	b.Logf("failover over %d signals (%s, TTL %v): min %v, p50 %v, p99 %v, max %v",
		len(took), name, f.ttl, took[0].Round(time.Millisecond), p50.Round(time.Millisecond), p99.Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
}
