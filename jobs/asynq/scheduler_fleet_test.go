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

	asynqlock "github.com/syncguard-go/syncguard/jobs/asynq"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// The scheduler fleet test runs this test binary as replica processes:
// TestMain calls schedReplica first, which runs one and exits when the
// environment asks for a replica.
const (
	schedAddrEnv    = "SYNCGUARD_SCHED_REPLICA_ADDR"
	schedPrefixEnv  = "SYNCGUARD_SCHED_REPLICA_PREFIX"
	schedQueueEnv   = "SYNCGUARD_SCHED_REPLICA_QUEUE"
	schedNameEnv    = "SYNCGUARD_SCHED_REPLICA_NAME"
	schedTTLEnv     = "SYNCGUARD_SCHED_REPLICA_TTL"
	schedClockEnv   = "SYNCGUARD_SCHED_REPLICA_CLOCK"   // the wall clock at schedOrigin, Unix ns
	schedVersionEnv = "SYNCGUARD_SCHED_REPLICA_VERSION" // "1", or "2": the "report" entry edited
	// schedSoakEnv, a duration, makes TestSchedulerFleet repeat its faults
	// for that long (make chaos sets it).
	schedSoakEnv = "SYNCGUARD_SCHED_SOAK"
)

// schedKey is the election key of the fleet.
const schedKey = "sched"

// schedSpeed is how much faster the replicas' clock runs: a minute of
// cron time is a second of the test.
const schedSpeed = 60

// schedOrigin is the replicas' clock at the fleet's start: 01:25 EDT on
// New York's fall-back day, so the "dst" entry meets 01:30 twice in an
// hour of the replicas' clock, and must run once.
var schedOrigin = time.Date(2026, 11, 1, 5, 25, 0, 0, time.UTC)

// schedEntries are the fleet's entries, by name: an even spec, an uneven
// one, a daily time that the fall-back repeats, and a named entry that
// version 2 edits.
var schedEntries = map[string]string{
	"every":  "* * * * *",
	"uneven": "1-3,*/7 * * * *",
	"dst":    "CRON_TZ=America/New_York 30 1 * * *",
	"report": "*/3 * * * *",
}

// schedRegister registers the fleet's entries on s as replica n of
// version v: options in an order that depends on n, asynq.Unique refused,
// the "report" entry's payload and options edited in version 2.
func schedRegister(s *asynqlock.Scheduler, queue string, n int, v string) error {
	opts := []asynq.Option{asynq.Queue(queue), asynq.MaxRetry(3)}
	if n%2 == 1 {
		opts = []asynq.Option{asynq.MaxRetry(3), asynq.Queue(queue)}
	}
	for _, name := range []string{"every", "uneven", "dst"} {
		id, err := s.Register(schedEntries[name], asynq.NewTask(name, nil), opts...)
		if err != nil {
			return err
		}
		schedIDs.Store(id, name)
	}
	if _, err := s.Register("@every 5s", asynq.NewTask("unique", nil), asynq.Queue(queue), asynq.Unique(time.Minute)); lock.CodeOf(err) != lock.CodeInvalidArgument {
		return fmt.Errorf("asynq.Unique: got %v, want InvalidArgument", err)
	}
	report := append(opts, asynqlock.EntryName("report"))
	if v == "2" {
		report = append(report, asynq.Timeout(time.Minute))
	}
	_, err := s.Register(schedEntries["report"], asynq.NewTask("report", []byte("v"+v)), report...)
	schedIDs.Store("report", "report")
	return err
}

// schedIDs maps entry ids to the names of schedEntries.
var schedIDs sync.Map

// schedReplica, in a replica process, runs a Scheduler with the fleet's
// entries on clients of its own (go-redis's default options) until
// SIGTERM, and prints a line per tick it tried:
// "tick <entry> <fence> <scheduled time> <ok|conflict|error> <catch-up> <wall clock in ns>".
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
	name := os.Getenv(schedNameEnv)
	s, err := asynqlock.NewScheduler(client, b, schedKey, name, election.WithTTL(ttl))
	if err != nil {
		fail("NewScheduler:", err)
	}
	start, err := strconv.ParseInt(os.Getenv(schedClockEnv), 10, 64)
	if err != nil {
		fail("clock:", err)
	}
	asynqlock.SetClock(s, schedOrigin, time.Unix(0, start), schedSpeed)
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "replica-"))
	time.Sleep(rand.N(time.Second)) // replicas register at different times
	if err := schedRegister(s, os.Getenv(schedQueueEnv), n, os.Getenv(schedVersionEnv)); err != nil {
		fail("Register:", err)
	}
	var mu sync.Mutex
	s.OnTick(func(tk asynqlock.Tick) {
		if tk.Kind != asynqlock.TickEnqueue {
			return // the versions differ while both run: expected here
		}
		status := "ok"
		switch {
		case errors.Is(tk.Err, asynq.ErrTaskIDConflict):
			status = "conflict"
		case tk.Err != nil:
			status = "error"
		}
		entry, _ := schedIDs.Load(tk.EntryID)
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf("tick %s %s %s %s %t %d\n", entry, tk.Fence, tk.At.Format(time.RFC3339), status, tk.CatchUp, time.Now().UnixNano())
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
	entry   string
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
	begin  time.Time // the wall clock at schedOrigin

	mu      sync.Mutex
	version string // of the replicas started from now on
	events  []schedEvent
	procs   map[string]*exec.Cmd
	n       int
	wg      sync.WaitGroup
}

// start starts one more replica.
func (f *schedFleet) start() {
	f.t.Helper()
	f.mu.Lock()
	f.n++
	name, version := "replica-"+strconv.Itoa(f.n), f.version
	f.mu.Unlock()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), schedAddrEnv+"="+f.addr, schedPrefixEnv+"="+f.prefix,
		schedQueueEnv+"="+f.queue, schedNameEnv+"="+name, schedTTLEnv+"="+f.ttl.String(),
		schedClockEnv+"="+strconv.FormatInt(f.begin.UnixNano(), 10), schedVersionEnv+"="+version)
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
	var entry, fence, at, status, catchUp string
	var wall int64
	if _, err := fmt.Sscanf(line, "tick %s %s %s %s %s %d", &entry, &fence, &at, &status, &catchUp, &wall); err != nil {
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
	f.events = append(f.events, schedEvent{name, entry, lock.Fence(fence), when, status, catchUp == "true", time.Unix(0, wall)})
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

// newSchedFleet returns a fleet of no replicas yet, of version 1, on e.
func newSchedFleet(t testing.TB, e *env) *schedFleet {
	return &schedFleet{t: t, addr: e.redis.Addr(), prefix: strings.TrimSuffix(redistest.Prefix(t), ":"),
		queue: e.queue, ttl: 2 * time.Second, procs: map[string]*exec.Cmd{}, begin: time.Now(), version: "1"}
}

// TestSchedulerFleet: three replica processes run a Scheduler with a 2s
// TTL on a clock 60 times faster (a cron minute a second), from 01:25 on
// New York's fall-back day: an even spec, an uneven one, a daily 01:30 in
// New York, and a named entry that version 2 edits. They register at
// different times, with options in different orders, and see asynq.Unique
// refused. The leader is killed twice, stopped once (its term handed over
// at once) and stalled past its TTL once (repeated for
// SYNCGUARD_SCHED_SOAK when set); replicas of version 2 replace the
// faulted ones from the second fault on. Every scheduled time of every
// entry is in the queue at most once (nothing consumes them), enqueued by
// exactly one replica, and one is missed only when a later one was
// enqueued within a failover.
func TestSchedulerFleet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := newSchedFleet(t, e)
	for range 3 {
		f.start()
	}
	f.waitTerm("", 15*time.Second)
	soak, _ := time.ParseDuration(os.Getenv(schedSoakEnv))
	end := time.Now().Add(soak)
	for first := true; first || time.Now().Before(end); first = false {
		for i, kind := range []string{"kill", "resign", "kill", "stall"} {
			if i == 1 {
				f.mu.Lock()
				f.version = "2"
				f.mu.Unlock()
			}
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

// schedTick is one scheduled time of one entry (a name of schedEntries).
type schedTick struct {
	entry string
	at    time.Time
}

// queued counts the queue's tasks by scheduled time and entry.
func queued(t *testing.T, e *env) map[schedTick]int {
	t.Helper()
	s, err := asynqlock.NewScheduler(e.client, e.backend, schedKey, "checker")
	if err != nil {
		t.Fatal(err)
	}
	if err := schedRegister(s, e.queue, 0, "1"); err != nil { // the entries' ids
		t.Fatal(err)
	}
	tasks, err := e.insp.ListPendingTasks(e.queue, asynq.PageSize(10000))
	if err != nil {
		t.Fatal(err)
	}
	out := map[schedTick]int{}
	for _, ti := range tasks {
		parts := strings.SplitN(ti.ID, ":", 4)
		at, err := time.Parse(time.RFC3339, parts[len(parts)-1])
		if err != nil {
			t.Fatalf("task id %q: %v", ti.ID, err)
		}
		name, ok := schedIDs.Load(parts[2])
		if !ok {
			t.Fatalf("task id %q: not an entry of the fleet", ti.ID)
		}
		out[schedTick{name.(string), at}]++
	}
	return out
}

// checkTicks compares the queue with what the replicas reported.
func checkTicks(t *testing.T, e *env, f *schedFleet) {
	t.Helper()
	inQueue := queued(t, e)
	reported := map[schedTick][]string{}
	terms := map[lock.Fence]bool{}
	conflicts, catchUps, failed := 0, 0, 0
	for _, ev := range f.events {
		switch ev.status {
		case "ok":
			k := schedTick{ev.entry, ev.at}
			reported[k] = append(reported[k], ev.replica+"/"+string(ev.fence))
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
	byEntry := map[string][]time.Time{}
	for k, n := range inQueue {
		byEntry[k.entry] = append(byEntry[k.entry], k.at)
		if n != 1 || len(reported[k]) != 1 {
			t.Errorf("%s at %v: %d tasks in the queue, enqueued by %v; want 1, by one replica", k.entry, k.at.Format(time.TimeOnly), n, reported[k])
		}
	}
	for k, by := range reported {
		if inQueue[k] == 0 {
			t.Errorf("%s at %v: enqueued by %v but not in the queue", k.entry, k.at.Format(time.TimeOnly), by)
		}
	}
	coalesced := checkMissed(t, f, byEntry)
	if dst := byEntry["dst"]; len(dst) > 1 || len(dst) == 1 && !dst[0].Equal(schedOrigin.Add(5*time.Minute)) {
		t.Errorf("dst: enqueued at %v, want once, at 01:30 EDT (05:30 UTC)", dst)
	}
	t.Logf("%d ticks in the queue (by entry: every %d, uneven %d, dst %d, report %d) over %d terms, %d catch-ups, %d coalesced, %d conflicts, %d failed enqueues, 0 duplicates",
		len(inQueue), len(byEntry["every"]), len(byEntry["uneven"]), len(byEntry["dst"]), len(byEntry["report"]), len(terms), catchUps, coalesced, conflicts, failed)
	if len(terms) < 5 {
		t.Errorf("%d terms enqueued ticks, want at least 5 (one per fault and the first)", len(terms))
	}
}

// checkMissed checks that every scheduled time of an entry between its
// first and last enqueued ones was enqueued, or coalesced into the next
// enqueued one within a failover (the TTL and 2s, on the fleet's clock);
// it returns how many were coalesced.
func checkMissed(t *testing.T, f *schedFleet, byEntry map[string][]time.Time) int {
	t.Helper()
	bound := (f.ttl + 2*time.Second) * schedSpeed
	coalesced := 0
	for name, times := range byEntry {
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		j := 0
		for at := times[0]; !at.After(times[len(times)-1]); {
			for times[j].Before(at) {
				j++
			}
			if !times[j].Equal(at) {
				coalesced++
				if times[j].Sub(at) > bound {
					t.Errorf("%s: the %v tick missed, the next enqueued %v later (more than a failover)", name, at.Format(time.TimeOnly), times[j].Sub(at))
				}
			}
			next, err := asynqlock.NextTick(schedEntries[name], at)
			if err != nil {
				t.Fatal(err)
			}
			at = next
		}
	}
	return coalesced
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
	f := newSchedFleet(b, e)
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
