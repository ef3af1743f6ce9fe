package election_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// The fleet tests run this test binary as candidate processes: TestMain
// calls leadWorker first, which runs one and exits when the environment
// asks for a candidate.
const (
	leadAddrEnv   = "SYNCGUARD_LEAD_WORKER_ADDR"
	leadPrefixEnv = "SYNCGUARD_LEAD_WORKER_PREFIX"
	leadKeyEnv    = "SYNCGUARD_LEAD_WORKER_KEY"
	leadTTLEnv    = "SYNCGUARD_LEAD_WORKER_TTL"
)

// leadWorker, in a candidate process, runs Lead on a Backend of its own
// (go-redis's default options) and prints "lead <fence>" when a term
// starts. SIGTERM cancels Lead's context; the process exits as soon as
// Lead returns, printing "stopped <Lead's error>", without closing
// anything: what Lead left to the background dies with the process.
func leadWorker() {
	addr := os.Getenv(leadAddrEnv)
	if addr == "" {
		return
	}
	b, err := redisbackend.New(redis.NewClient(&redis.Options{Addr: addr}), &redisbackend.Options{Prefix: os.Getenv(leadPrefixEnv)})
	if err != nil {
		fmt.Println("New:", err)
		os.Exit(2)
	}
	ttl, _ := time.ParseDuration(os.Getenv(leadTTLEnv))
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer cancel()
	var out sync.Mutex
	err = election.Lead(ctx, b, os.Getenv(leadKeyEnv), fmt.Sprint("pid-", os.Getpid()), func(ctx context.Context, term lock.Lease) error {
		out.Lock()
		fmt.Println("lead", term.Fence)
		out.Unlock()
		<-ctx.Done()
		return nil
	}, election.WithTTL(ttl))
	fmt.Println("stopped", err)
	os.Exit(0)
}

// fleet runs candidate processes on one key.
type fleet struct {
	t           testing.TB
	srv         *redistest.Server
	prefix, key string
	ttl         time.Duration
	leads       chan leadLine // every "lead" line, as it is read
	queue       *redis.Client
}

// leadLine is a "lead" line of candidate process pid, and when it was read.
type leadLine struct {
	pid   int
	fence string
	at    time.Time
}

func newFleet(t testing.TB, srv *redistest.Server, key string, ttl time.Duration) *fleet {
	return &fleet{t: t, srv: srv, prefix: strings.TrimSuffix(redistest.Prefix(t), ":"), key: key, ttl: ttl,
		leads: make(chan leadLine, 64), queue: srv.Client(t)}
}

// start starts a candidate process.
func (f *fleet) start() *exec.Cmd {
	f.t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), leadAddrEnv+"="+f.srv.Addr(), leadPrefixEnv+"="+f.prefix,
		leadKeyEnv+"="+f.key, leadTTLEnv+"="+f.ttl.String(),
		"GORACE=atexit_sleep_ms=0") // the race detector's default second at exit
	stdout, err := c.StdoutPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if fence, ok := strings.CutPrefix(s.Text(), "lead "); ok {
				f.leads <- leadLine{pid: c.Process.Pid, fence: fence, at: time.Now()}
			}
		}
	}()
	return c
}

// queued waits until the key's queue holds n candidates.
func (f *fleet) queued(n int64) {
	f.t.Helper()
	q := f.prefix + ":queue:" + f.prefix + ":" + f.key
	waitFor(f.t, 20*time.Second, fmt.Sprintf("%d candidates queued", n), func() bool {
		return f.queue.ZCard(context.Background(), q).Val() == n
	})
}

// nextLead waits for the next "lead" line.
func (f *fleet) nextLead(within time.Duration) leadLine {
	f.t.Helper()
	select {
	case l := <-f.leads:
		return l
	case <-time.After(within):
		f.t.Fatalf("no candidate led within %v", within)
		return leadLine{}
	}
}

// doubleStop SIGTERMs the leader's process and the next candidate's
// together, and returns the next "lead" line of another process (the
// next candidate may lead briefly: a hand-off may reach it before its
// signal), with the old term's expiry read just before the signals.
func (f *fleet) doubleStop(leader, next *exec.Cmd, b *redisbackend.Backend) (leadLine, time.Time, time.Time) {
	f.t.Helper()
	old, err := election.LeaderOf(context.Background(), b, f.key)
	if err != nil {
		f.t.Fatal(err)
	}
	// A line of the leader's from before the signals (it led again, a new
	// term of its own) is not the answer to them.
	for drained := false; !drained; {
		select {
		case l := <-f.leads:
			if l.pid != leader.Process.Pid {
				f.t.Fatalf("before the signals: process %d led (fence %s), want only the leader %d", l.pid, l.fence, leader.Process.Pid)
			}
			f.t.Logf("before the signals: the leader %d led again (fence %s)", l.pid, l.fence)
		default:
			drained = true
		}
	}
	signalled := time.Now()
	_ = leader.Process.Signal(syscall.SIGTERM)
	_ = next.Process.Signal(syscall.SIGTERM)
	for {
		l := f.nextLead(3 * f.ttl)
		if l.pid != next.Process.Pid {
			return l, old.ExpiresAt, signalled
		}
	}
}

// TestFleetDoubleStop: the leader's process and the next candidate's are
// SIGTERMed together (a scale-down), 20 times; each exits as soon as Lead
// returns. The third candidate leads every time by a hand-off, before the
// old term's expiry (TTL 10 s) would let it take a free key: a term handed
// to the next candidate as its context ended was handed on before its
// Lead returned.
func TestFleetDoubleStop(t *testing.T) {
	srv := redistest.Shared(t)
	f := newFleet(t, srv, "fleet:double-stop", 10*time.Second)
	b := newBackends(t, srv, f.prefix, 1)[0]
	leader := f.start()
	f.nextLead(20 * time.Second)
	var worst time.Duration
	for trial := range 20 {
		next, third := f.start(), (*exec.Cmd)(nil)
		f.queued(1)
		third = f.start()
		f.queued(2)
		got, expiry, signalled := f.doubleStop(leader, next, b)
		if got.pid != third.Process.Pid {
			t.Fatalf("trial %d: process %d (fence %s) led, want the third candidate %d (the leader was %d, the next %d)",
				trial, got.pid, got.fence, third.Process.Pid, leader.Process.Pid, next.Process.Pid)
		}
		if !got.at.Before(expiry) {
			t.Fatalf("trial %d: the third candidate led %v after the signals, past the old term's expiry: the term was stranded", trial, got.at.Sub(signalled))
		}
		worst = max(worst, got.at.Sub(signalled))
		_ = leader.Wait()
		_ = next.Wait()
		leader = third
	}
	t.Logf("20 double stops: the third candidate led at most %v after the signals", worst)
}

// BenchmarkElectionFailover measures failovers of Lead across OS
// processes (three candidate processes, TTL 3 s, go-redis's default
// options, a redis-server of its own): from the signal to the next
// leader's fn, 20 times, reported as p50 and p99 (bench/README.md has the
// figures). kill SIGKILLs the leader's process at a random point of its
// heartbeat: its term ends with its lease. double-stop SIGTERMs the
// leader's process and the next candidate's together: a hand-off to the
// third.
//
//	go test ./lock/election/ -run '^$' -bench ElectionFailover -benchtime 1x
func BenchmarkElectionFailover(b *testing.B) {
	for _, name := range []string{"kill", "double-stop"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				failovers(b, name == "kill", 20)
			}
		})
	}
}

// failovers signals the leader n times (kill, or a double stop) and
// reports the failover times' p50 and p99.
func failovers(b *testing.B, kill bool, n int) {
	f := newFleet(b, redistest.Start(b), "bench:failover", 3*time.Second)
	procs := map[int]*exec.Cmd{}
	start := func() *exec.Cmd { c := f.start(); procs[c.Process.Pid] = c; return c }
	start()
	lead := f.nextLead(20 * time.Second)
	var queue []*exec.Cmd // the candidates, in queue order
	var took []time.Duration
	for range n {
		for len(queue) < 2 {
			queue = append(queue, start())
			f.queued(int64(len(queue)))
		}
		time.Sleep(rand.N(time.Second)) // a random point of the heartbeat (TTL/3)
		leader, stopped := procs[lead.pid], 0
		signalled := time.Now()
		if kill {
			_ = leader.Process.Kill()
		} else {
			_ = leader.Process.Signal(syscall.SIGTERM)
			_ = queue[0].Process.Signal(syscall.SIGTERM)
			stopped = queue[0].Process.Pid
		}
		for lead = f.nextLead(3 * f.ttl); lead.pid == stopped; lead = f.nextLead(3 * f.ttl) {
		}
		took = append(took, lead.at.Sub(signalled))
		_ = leader.Wait()
		queue = slices.DeleteFunc(queue, func(c *exec.Cmd) bool {
			if c.Process.Pid == stopped {
				_ = c.Wait()
			}
			return c.Process.Pid == stopped || c.Process.Pid == lead.pid
		})
	}
	slices.Sort(took)
	p50, p99 := took[len(took)/2], took[(len(took)*99+99)/100-1]
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.Logf("%d failovers (TTL %v): min %v, p50 %v, p99 %v", len(took), f.ttl,
		took[0].Round(time.Millisecond), p50.Round(time.Millisecond), p99.Round(time.Millisecond))
}
