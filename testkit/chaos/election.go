package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncguard-go/syncguard/internal/wire"
	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/election"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// ElectionKey is the key the candidates of an election run campaign on.
const ElectionKey = "leader"

// ElectionConfig sizes an election run.
type ElectionConfig struct {
	// Duration is how long the candidates campaign and faults are injected.
	Duration time.Duration
	// Candidates is the number of candidates, each on a go-redis client,
	// toxiproxy proxy and Backend of its own (default 3).
	Candidates int
	// TTL is the term's lease TTL given to election.Lead.
	TTL time.Duration
	// Gap is the fault-free time between two faults.
	Gap time.Duration
	// Seed seeds the random choices.
	Seed uint64
	// Record records every backend call through a [History] hook
	// (lock.WithHooks), for the lock run's checks on the key's history.
	// A Backend so wrapped keeps only package lock's extensions, so Lead
	// then runs on what it sees as a plain Backend; without Record the
	// candidates run on redisbackend's Backend itself, as users do, and
	// only the checks of the terms fn ran apply.
	Record bool
}

// Term is one run of the function election.Lead calls while its
// candidate leads: its lease's times by the server's clock, its run by the
// candidate's.
type Term struct {
	Candidate int
	Fence     lock.Fence
	// StartNs and EndNs are when fn started and returned (client clock).
	// The release, if any, came after EndNs.
	StartNs, EndNs int64
	// AcquiredMs is the grant's server time (the lease's expiry at grant
	// less its TTL, or its lock data's acquiredAtMs); ConfirmedMs the
	// latest expiry the server confirmed for the lease while fn ran (at
	// grant, and in its lock data read every TTL/5).
	AcquiredMs, ConfirmedMs int64
	End                     string // how it ended (a key of ElectionReport.TermEnds)
}

// EndMs is the earliest the term can have ended by the server's clock:
// its last confirmed expiry, or fn's return (its release came later) if
// earlier. A leader that crashed or stalled ends at its last confirmed
// expiry.
func (t Term) EndMs() int64 { return min(t.ConfirmedMs, t.EndNs/1e6) }

// The ways a term ends, as counted in ElectionReport.TermEnds.
const (
	termResigned  = "resigned (fn returned nil)"
	termLost      = "lost (fn's context ended: lock.ErrLeaseLost)"
	termCancelled = "cancelled (Lead's context ended)"
	termStalled   = "stalled past its TTL, then wrote and returned"
	termRunEnd    = "the end of the run"
)

// candidate is one process campaigning with election.Lead.
type candidate struct {
	id      int
	b       lock.Backend
	cfg     ElectionConfig
	reg     *Register
	leading atomic.Bool
	orders  chan string // a leader fault for fn to act out: resign or stall
	mu      sync.Mutex
	cancel  context.CancelFunc // the running Lead's
	running context.Context    // the run's: its end is not a fault
	rng     *rand.Rand         // the campaign goroutine's
	// observer reads the term's lock data from the server, for the owner
	// it names (no proxy, no faults of its own; fails fast).
	observer *redis.Client
	e        *electionRun
}

// electionRun is what the candidates share.
type electionRun struct {
	mu      sync.Mutex
	terms   []Term
	leads   map[string]int // Lead's returns, by outcome
	owners  map[string]int // what the terms' lock data said of their leader
	found   []Violation
	writes  workerStats
	late    int // writes made by a leader waking from a stall
	lateRej int // of which rejected
}

// RunElection starts a redis-server and candidates running election.Lead
// on [ElectionKey] in a loop, and injects faults on the leader and the
// server for cfg.Duration (docs/testing.md). The checks are [Run]'s on the
// one key, plus per-candidate fence order. It fails t only on harness
// errors; the caller asserts on the report.
func RunElection(t testing.TB, cfg ElectionConfig) *ElectionReport {
	t.Helper()
	if cfg.Candidates <= 0 {
		cfg.Candidates = 3
	}
	redis.SetLogger(quietLogger{})
	srv := redistest.Start(t, redistest.WithAOF())
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	observer := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1,
		DialTimeout: 250 * time.Millisecond, ReadTimeout: 250 * time.Millisecond, WriteTimeout: 250 * time.Millisecond})
	t.Cleanup(func() { _ = observer.Close() })
	hist, reg := NewHistory(), NewRegister()
	run := &electionRun{leads: map[string]int{}, owners: map[string]int{}}
	proxies := make([]*toxiproxy.Proxy, cfg.Candidates)
	cands := make([]*candidate, cfg.Candidates)
	for i := range cands {
		p := toxiproxy.NewProxy(api, fmt.Sprintf("candidate%d", i), "127.0.0.1:0", srv.Addr())
		if err := p.Start(); err != nil {
			t.Fatalf("chaos: starting proxy: %v", err)
		}
		t.Cleanup(p.Stop)
		proxies[i] = p
		rdb := redis.NewClient(&redis.Options{Addr: p.Listen}) // go-redis's defaults, as users run
		t.Cleanup(func() { _ = rdb.Close() })
		b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: chaosPrefix, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatalf("chaos: %v", err)
		}
		var lb lock.Backend = b
		if cfg.Record {
			lb = lock.WithHooks(b, hist.Hook(i))
		}
		cands[i] = &candidate{id: i, b: lb, cfg: cfg, reg: reg, orders: make(chan string, 1), e: run, observer: observer}
	}

	rep := &ElectionReport{ElectionConfig: cfg, Faults: map[string]int{}}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	start := time.Now()
	for _, c := range cands {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.campaign(ctx)
		}()
	}
	in := &injector{t: t, srv: srv, proxies: proxies, ttl: cfg.TTL, rng: rand.New(rand.NewPCG(cfg.Seed, 0xe1ec))}
	in.inject(electionSchedule(cands, in.rng, cfg), cfg.Gap, start.Add(cfg.Duration), rep.Faults)
	stop()
	wg.Wait()
	rep.Elapsed = time.Since(start)

	grants := hist.Grants()
	_, rep.Fences = hiddenGrants(t, observer, []string{ElectionKey}, grants)
	rep.Violations = append(rep.Violations, hist.Found()...)
	rep.fill(hist.Ops(), grants, reg.Log(), hist.Errors(), run)
	return rep
}

// leaderFault is a fault on whoever leads: it waits up to a TTL for a
// leader and applies do to one (at random, should two believe they lead);
// without a leader it applies nothing.
func leaderFault(name string, length float64, cands []*candidate, do func(in *injector, c *candidate)) fault {
	return fault{name, times(length), func(in *injector) {
		deadline := time.Now().Add(in.ttl)
		for {
			var leaders []*candidate
			for _, c := range cands {
				if c.leading.Load() {
					leaders = append(leaders, c)
				}
			}
			if len(leaders) > 0 {
				do(in, leaders[in.rng.IntN(len(leaders))])
				return
			}
			if time.Now().After(deadline) {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}}
}

// electionSchedule is electionFaults once in order (so a short run has the
// first few), then faults drawn from it at random, more than fit in the
// run.
func electionSchedule(cands []*candidate, rng *rand.Rand, cfg ElectionConfig) []fault {
	fs := electionFaults(cands)
	base := len(fs)
	for range cfg.Duration / max(cfg.Gap, time.Millisecond) {
		fs = append(fs, fs[rng.IntN(base)])
	}
	return fs
}

// electionFaults is the election run's faults: faults on the leader
// between the lock run's faults on the server and the connections, the
// first few short enough for the short run.
func electionFaults(cands []*candidate) []fault {
	order := func(what string) func(in *injector, c *candidate) {
		return func(in *injector, c *candidate) {
			select {
			case c.orders <- what:
			default:
			}
			if what == termStalled {
				// The paused process's connections carry nothing either:
				// its heartbeat's extensions are not answered (toxiproxy's
				// timeout toxic; the connections close when it is removed).
				in.toxicOn(in.proxies[c.id:][:1], `{"name":"stall","type":"timeout","stream":"upstream","attributes":{"timeout":0}}`, 2*in.ttl)
			}
		}
	}
	return []fault{
		leaderFault("leader's Lead context cancelled (it starts again after 20-50 ms)", 0.5, cands, func(_ *injector, c *candidate) {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.cancel != nil {
				c.cancel()
			}
		}),
		faultNamed("redis restarted"),
		leaderFault("leader stalled 2x TTL (fn asleep, its connections silent), then writes as if it led", 2.5, cands, order(termStalled)),
		faultNamed("redis paused (SIGSTOP) for TTL/2"),
		leaderFault("leader resigned (fn returned nil)", 0.5, cands, order(termResigned)),
		leaderFault("leader partitioned (its proxy down) for 2x TTL", 2, cands, func(in *injector, c *candidate) {
			in.cut(in.proxies[c.id:][:1], 2*in.ttl)
		}),
		faultNamed("redis stopped for 2x TTL"),
		leaderFault("latency TTL/2 +- TTL/4 on the leader's replies for 2x TTL", 2, cands, func(in *injector, c *candidate) {
			ms := in.ttl.Milliseconds()
			in.toxicOn(in.proxies[c.id:][:1], fmt.Sprintf(
				`{"name":"latency","type":"latency","stream":"downstream","attributes":{"latency":%d,"jitter":%d}}`, ms/2, ms/4), 2*in.ttl)
		}),
		faultNamed("redis paused (SIGSTOP) for 4x TTL"),
		faultNamed("all connections cut"),
		faultNamed("replies dropped (timeout toxic)"),
		faultNamed("replies lost after execution (reset_peer"),
		faultNamed("connections reset"),
	}
}

// campaign runs election.Lead until ctx ends, starting it again (as a
// restarted process would) when it returns.
func (c *candidate) campaign(ctx context.Context) {
	c.rng = rand.New(rand.NewPCG(c.cfg.Seed, uint64(c.id)))
	c.running = ctx
	for ctx.Err() == nil {
		lctx, cancel := context.WithCancel(ctx)
		c.mu.Lock()
		c.cancel = cancel
		c.mu.Unlock()
		err := election.Lead(lctx, c.b, ElectionKey, c.identity(), c.lead, election.WithTTL(c.cfg.TTL))
		cancel()
		c.e.lead(ctx, err)
		if lock.CodeOf(err) == lock.CodeInvalidArgument {
			return // the run's arguments: every campaign would fail alike
		}
		time.Sleep(time.Duration(20+c.rng.IntN(30)) * time.Millisecond)
	}
}

// lead is the candidate's fn: it writes to the register with its term's
// fence at once and every TTL/5 until the term ends, it resigns (after
// TTL/2 to 4x TTL, so that terms change hands between faults too), or it
// acts out a leader fault ordered by the injector.
func (c *candidate) lead(held context.Context, l lock.Lease) error {
	term := Term{Candidate: c.id, Fence: l.Fence, StartNs: time.Now().UnixNano(),
		AcquiredMs: l.ExpiresAt.Add(-l.TTL).UnixMilli(), ConfirmedMs: l.ExpiresAt.UnixMilli()}
	c.leading.Store(true)
	defer func() {
		c.leading.Store(false)
		term.EndNs = time.Now().UnixNano()
		c.e.term(term)
	}()
	select { // an order given to an earlier term is stale
	case <-c.orders:
	default:
	}
	write := func(late bool) {
		lost := held.Err() != nil
		ok := c.reg.Write(ElectionKey, l.Fence, c.id, lost)
		c.e.writes.write(ok, lost)
		if late {
			c.e.lateWrite(ok)
		}
	}
	write(false)
	c.confirm(&term, l, true)
	tick := time.NewTicker(c.cfg.TTL / 5)
	defer tick.Stop()
	resign := time.After(c.cfg.TTL/2 + time.Duration(c.rng.Int64N(int64(7*c.cfg.TTL/2))))
	for {
		select {
		case <-resign:
			term.End = termResigned
			return nil
		case <-held.Done():
			switch {
			case errors.Is(context.Cause(held), lock.ErrLeaseLost):
				term.End = termLost
			case c.running.Err() != nil:
				term.End = termRunEnd
			default:
				term.End = termCancelled
			}
			return nil
		case <-tick.C:
			write(false)
			c.confirm(&term, l, false)
		case what := <-c.orders:
			term.End = what
			if what == termStalled {
				// A stop-the-world pause (the injector silences the
				// process's connections meanwhile): fn wakes believing it
				// leads.
				time.Sleep(2 * c.cfg.TTL)
				write(true)
			}
			return nil
		}
	}
}

// identity is the candidate's identity in the election.
func (c *candidate) identity() string { return fmt.Sprintf("candidate-%d", c.id) }

// confirm reads the term's lock data from the server: while it holds the
// term's lock id, its expiry is confirmed (term.ConfirmedMs) and its
// acquiredAtMs is the term's start. On the first read (owner), it counts
// what the "owner" member says; naming another candidate is a violation.
// The owner may be stored a moment after the grant, and a term may have
// ended already: both are counted, not violations.
func (c *candidate) confirm(term *Term, l lock.Lease, owner bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	raw, err := c.observer.Get(ctx, chaosPrefix+":"+ElectionKey).Result()
	d, derr := wire.DecodeLockData(raw)
	if err == nil && derr == nil && d.LockID == l.ID {
		term.AcquiredMs = d.AcquiredAtMs
		term.ConfirmedMs = max(term.ConfirmedMs, d.ExpiresAtMs)
	}
	if !owner {
		return
	}
	var out string
	switch {
	case err != nil || derr != nil:
		out = "not read (server down or key gone)"
	case d.Fence != l.Fence:
		out = "another term's (this one ended already)"
	case d.Owner == "":
		out = "no owner stored (yet)"
	case d.Owner == c.identity():
		out = "named its leader"
	default:
		out = "named another candidate"
		c.e.mu.Lock()
		c.e.found = append(c.e.found, Violation{KindOwner, fmt.Sprintf("candidate %d: the lock data of its term of fence %s names %q",
			c.id, l.Fence, d.Owner)})
		c.e.mu.Unlock()
	}
	c.e.mu.Lock()
	defer c.e.mu.Unlock()
	c.e.owners[out]++
}

// term records a term that ended.
func (e *electionRun) term(t Term) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.End == "" {
		t.End = termRunEnd
	}
	e.terms = append(e.terms, t)
}

func (e *electionRun) lateWrite(accepted bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.late++
	if !accepted {
		e.lateRej++
	}
}

// lead counts a return of election.Lead.
func (e *electionRun) lead(ctx context.Context, err error) {
	out := "error " + string(lock.CodeOf(err))
	switch {
	case lock.CodeOf(err) == lock.CodeInvalidArgument:
		out = "refused the run's arguments: " + err.Error()
	case ctx.Err() != nil:
		out = "stopped at the end of the run"
	case errors.Is(err, context.Canceled):
		out = "context cancelled (the leader fault)"
	case err == nil:
		out = "nil"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.leads[out]++
}
