package chaos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/lock/multilock"
	"github.com/syncguard-go/syncguard/lock/rwlock"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// Config sizes a chaos run.
type Config struct {
	// Duration is how long workers run and faults are injected.
	Duration time.Duration
	// Workers is the number of workers.
	Workers int
	// PerClient is how many workers share one client, proxy and Backend
	// (default 1): workers of one Backend wait for a key one of them holds
	// in their process (redisbackend's HandOffLocality), the others queue
	// in Redis. Each worker still records its calls through hooks of its
	// own.
	PerClient int
	// Keys is the number of lock keys they compete for.
	Keys int
	// Limit, when > 0, adds a key taken as a concurrency limit of Limit
	// slots ([LimitKey], lock.WithLimit), one more key for the workers to
	// pick. At most 4 (the linearizability model's bound).
	Limit int
	// TTL is the lease TTL given to lock.Do.
	TTL time.Duration
	// Gap is the fault-free time between two faults.
	Gap time.Duration
	// ReadWrite adds a key taken as a read-write lock ([RWKey],
	// lock/rwlock): by readers two times in three, else by a writer.
	ReadWrite bool
	// PauseEvery makes about one grant in PauseEvery pause its worker past
	// the TTL while holding (0: never).
	PauseEvery int
	// Seed seeds the workers' random choices.
	Seed uint64
	// Multi, when 2 or more, makes about one job in two take a set of 2
	// to Multi lock keys at once, in a random order, with lock/multilock:
	// holders of overlapping sets, checked as the holders of each key.
	Multi int
}

// Run starts a redis-server (AOF, fsync always) and the workers, injects
// faults for cfg.Duration, stops the workers, and checks the history. It
// fails t only on harness errors; the caller asserts on the report.
func Run(t testing.TB, cfg Config) *Report {
	t.Helper()
	if cfg.Limit < 0 || cfg.Limit > maxModelSlots {
		t.Fatalf("chaos: Limit %d, want 0 to %d", cfg.Limit, maxModelSlots)
	}
	if cfg.ReadWrite && cfg.Workers > modelHolders {
		t.Fatalf("chaos: %d workers with ReadWrite, want at most %d (the model's readers)", cfg.Workers, modelHolders)
	}
	if cfg.PerClient <= 0 {
		cfg.PerClient = 1
	}
	if cfg.Workers%cfg.PerClient != 0 {
		t.Fatalf("chaos: %d workers do not split into clients of %d", cfg.Workers, cfg.PerClient)
	}
	redis.SetLogger(quietLogger{})
	r := newRig(t, cfg)

	rep := &Report{Config: cfg, Faults: map[string]int{}, Do: map[string]int{}}
	reg := NewRegister()
	var stats workerStats
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	start := time.Now()
	for w := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runWorker(ctx, w, cfg, r.backends[w], r.gates[w], reg, r.hist, &stats)
		}()
	}

	inj := &injector{t: t, srv: r.srv, proxies: r.proxies, probes: r.probes, ttl: cfg.TTL, rng: rand.New(rand.NewPCG(cfg.Seed, 0xfa17))}
	inj.inject(faults, cfg.Gap, start.Add(cfg.Duration), rep.Faults)
	stop()
	wg.Wait()
	rep.Elapsed = time.Since(start)
	r.report(t, rep, &stats, reg)
	return rep
}

// rig is what a run's workers run against: the server, and per client a
// proxy, a probe and a Backend, which each of the client's workers wraps
// with a gate and the history's hook.
type rig struct {
	srv      *redistest.Server
	observer *redis.Client // the harness's: reads the server directly
	proxies  []*toxiproxy.Proxy
	probes   []*probe
	backends []lock.Backend // by worker
	gates    []*gate        // by worker
	hist     *History
	pstats   probeStats
}

// newRig starts the server, the observer and the clients of cfg.
func newRig(t testing.TB, cfg Config) *rig {
	clients := cfg.Workers / cfg.PerClient
	r := &rig{srv: redistest.Start(t, redistest.WithAOF()), proxies: make([]*toxiproxy.Proxy, clients),
		probes: make([]*probe, clients), backends: make([]lock.Backend, cfg.Workers),
		gates: make([]*gate, cfg.Workers), hist: NewHistory()}
	// The observer reads the server directly (no proxy, no faults of its
	// own) for the checks that need the server's view. It is the harness's
	// client, not a worker's: it fails fast rather than retry.
	r.observer = redis.NewClient(&redis.Options{Addr: r.srv.Addr(), MaxRetries: -1,
		DialTimeout: 250 * time.Millisecond, ReadTimeout: 250 * time.Millisecond, WriteTimeout: 250 * time.Millisecond})
	t.Cleanup(func() { _ = r.observer.Close() })
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	for i := range clients {
		r.addClient(t, api, i, cfg.PerClient)
	}
	return r
}

// addClient starts client i: its proxy, its go-redis client with its
// probe, its Backend, and the Backends of its perClient workers.
func (r *rig) addClient(t testing.TB, api *toxiproxy.ApiServer, i, perClient int) {
	p := toxiproxy.NewProxy(api, fmt.Sprintf("worker%d", i), "127.0.0.1:0", r.srv.Addr())
	if err := p.Start(); err != nil {
		t.Fatalf("chaos: starting proxy: %v", err)
	}
	t.Cleanup(p.Stop)
	r.proxies[i] = p
	// What users run: go-redis's default options (MaxRetries 3, so a
	// command whose reply is lost is sent again; no context timeouts,
	// so a call is bounded only by what the backend does with its
	// context; 5 s dial and 3 s read/write timeouts). The hooks only
	// observe, and inject the client half of the lost-reply fault.
	rdb := redis.NewClient(&redis.Options{Addr: p.Listen})
	r.probes[i] = &probe{worker: i, prefix: chaosPrefix + ":", observer: r.observer, hist: r.hist, stats: &r.pstats}
	rdb.AddHook(r.probes[i])
	t.Cleanup(func() { _ = rdb.Close() })
	b, err := redisbackend.New(rdb, &redisbackend.Options{Prefix: chaosPrefix, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("chaos: %v", err)
	}
	for j := range perClient {
		w := i*perClient + j
		r.gates[w] = &gate{}
		// The gate holds an extension back before it is recorded, as
		// in a paused process it would not have been sent yet.
		r.backends[w] = lock.WithHooks(b, r.gates[w], r.hist.Hook(w))
	}
}

// report fills rep from what the workers, the probes, the history and the
// register saw, and checks the history.
func (r *rig) report(t testing.TB, rep *Report, stats *workerStats, reg *Register) {
	stats.into(rep)
	rep.Faults["worker paused past its TTL while holding"] = int(stats.pauses.Load())
	rep.ScriptCalls, rep.ScriptWrites = int(r.pstats.calls.Load()), int(r.pstats.written.Load())
	rep.RepliesDropped = int(r.pstats.dropped.Load())
	rep.BusyChecked, rep.BusyUnchecked = int(r.pstats.busy.Load()), int(r.pstats.unchecked.Load())
	ops, grants, writes := r.hist.Ops(), r.hist.Grants(), reg.Log()
	rep.HiddenGrants, rep.Fences = hiddenGrants(t, r.observer, rep.Config.keys(), grants)
	rep.Violations = append(rep.Violations, r.hist.Found()...)
	rep.OrphanReleases, rep.UnknownIDExtends = r.hist.OrphanReleases()
	rep.fill(ops, grants, writes, r.hist.Errors(), r.hist.Dos())
}

// chaosPrefix is the backends' key prefix.
const chaosPrefix = "chaos"

// LimitKey is the key the workers take as a concurrency limit of
// Config.Limit slots.
const LimitKey = "slots"

// keys returns the keys of the run: the lock keys, then the limit key.
func (cfg Config) keys() []string {
	keys := make([]string, 0, cfg.Keys+1)
	for k := range cfg.Keys {
		keys = append(keys, fmt.Sprintf("key%d", k))
	}
	if cfg.Limit > 0 {
		keys = append(keys, LimitKey)
	}
	if cfg.ReadWrite {
		keys = append(keys, RWKey)
	}
	return keys
}

// hiddenGrants counts the fences the server issued that no worker was
// told of (an acquire whose reply was lost, or answered busy to its own
// grant), from the fence counters left on the server (single layout:
// prefix:fence:prefix:key). -1 when the counters cannot be read.
func hiddenGrants(t testing.TB, observer *redis.Client, keys []string, grants []Grant) (hidden, issued int) {
	known := map[string]bool{}
	for _, g := range grants {
		known[g.Key+"\x00"+string(g.Fence)] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, key := range keys {
		var n int64
		var err error
		for try := 0; try < 20; try++ { // the last fault may have left the server restarting
			if n, err = observer.Get(ctx, chaosPrefix+":fence:"+chaosPrefix+":"+key).Int64(); err == nil || err == redis.Nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err == redis.Nil {
			continue
		}
		if err != nil {
			t.Logf("chaos: reading the fence counter of %s: %v", key, err)
			return -1, -1
		}
		issued += int(n)
		for f := int64(1); f <= n; f++ {
			if !known[key+"\x00"+fmt.Sprintf("%015d", f)] {
				hidden++
			}
		}
	}
	return hidden, issued
}

// runWorker runs lock.Do on random keys until ctx ends: a lock, a slot
// of the limit key (lock.WithLimit), or the read-write key (rwlock.Read
// and Write). Inside a lock or as a writer, the worker writes to the
// register with its fence when it starts, and again when it ends (a slot
// or a reader writes nothing: its holders legitimately run side by side,
// which the fenced register would call stale), after either a piece of work (short, or half a TTL to two
// TTLs long, cut short when the lease is lost) or a pause past the TTL
// during which its heartbeat is frozen too (a stop-the-world pause).
//
// Every lock.Do gets a context with a deadline, as a request would have:
// long enough for the acquisition timeout and the longest piece of work
// (4 TTLs). Do must return by it (or, once fn ran, by fn's return plus the
// release timeout); [CheckDeadlines] checks that from the recorded calls.
func runWorker(ctx context.Context, w int, cfg Config, b lock.Backend, g *gate, reg *Register, hist *History, st *workerStats) {
	wk := &worker{id: w, cfg: cfg, b: b, g: g, reg: reg, hist: hist, st: st, rng: rand.New(rand.NewPCG(cfg.Seed, uint64(w)))}
	keys := cfg.keys()
	for first := true; ctx.Err() == nil; first = false {
		j := wk.next(keys, first)
		goneAtRelease, err := wk.do(ctx, j)
		st.do(ctx, j.kind(), err)
		if err == nil && goneAtRelease {
			st.silentLoss.Add(1)
		}
		if lock.CodeOf(err) != "" && ctx.Err() == nil {
			// Redis is down or unreachable: back off as a real client would,
			// so the history is not flooded with refused connections.
			time.Sleep(time.Duration(10+wk.rng.IntN(20)) * time.Millisecond)
		}
	}
}

// worker is one worker of runWorker, with its random choices.
type worker struct {
	id   int
	cfg  Config
	b    lock.Backend
	g    *gate
	reg  *Register
	hist *History
	st   *workerStats
	rng  *rand.Rand
	rw   int // jobs on the read-write key so far
}

// job is one lock.Do of a worker: its key, and what it does holding it.
type job struct {
	key   string
	keys  []string      // a multi-key job's keys (key names them all)
	limit []lock.Option // lock.WithLimit for the limit key
	mode  rwlock.Mode   // for the read-write key; 0 else
	work  time.Duration
	pause bool // past the TTL, instead of the work
}

// next picks the worker's next job among keys.
func (wk *worker) next(keys []string, first bool) job {
	j := job{key: keys[wk.rng.IntN(len(keys))]}
	if wk.cfg.Multi >= 2 && wk.cfg.Keys >= 2 && wk.rng.IntN(2) == 0 {
		j.keys = wk.multiKeys()
		j.key = strings.Join(j.keys, "+")
	}
	if j.key == LimitKey {
		j.limit = []lock.Option{lock.WithLimit(wk.cfg.Limit)}
	}
	if j.key == RWKey {
		j.mode = rwMode(wk.rw)
		wk.rw++
	}
	j.work = time.Duration(5+wk.rng.IntN(40)) * time.Millisecond
	if wk.rng.IntN(10) == 0 {
		// A long job: the heartbeat must carry it through faults, or
		// cancel it when the lease is lost.
		j.work = wk.cfg.TTL/2 + time.Duration(wk.rng.Int64N(int64(3*wk.cfg.TTL/2)))
	}
	// Worker 0's first grant always pauses, so every run has one.
	j.pause = wk.cfg.PauseEvery > 0 && (wk.rng.IntN(wk.cfg.PauseEvery) == 0 || wk.id == 0 && first)
	return j
}

// do runs j in lock.Do and records the call. goneAtRelease says the
// release found the lease gone.
func (wk *worker) do(ctx context.Context, j job) (goneAtRelease bool, err error) {
	ttl := wk.cfg.TTL
	dctx, cancel := context.WithTimeout(ctx, 4*ttl)
	call := DoCall{Worker: wk.id, Key: j.key, CallNs: time.Now().UnixNano(), DeadlineNs: deadlineNs(dctx), ReleaseTimeout: ttl}
	opts := append([]lock.Option{lock.WithTTL(ttl), lock.WithWait(2 * ttl),
		lock.WithRetry(lock.Retry{BaseDelay: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond}), lock.WithReleaseTimeout(ttl),
		lock.WithReleaseErrorHandler(func(_ lock.Lease, err error) {
			wk.st.releaseErrors.Add(1)
			goneAtRelease = errors.Is(err, lock.ErrNotHeld)
		})}, j.limit...)
	if j.keys != nil {
		err = multilock.Do(dctx, wk.b, j.keys, func(held context.Context, leases []lock.Lease) error {
			defer func() { call.FnReturnNs = time.Now().UnixNano() }()
			return wk.hold(held, leases, j)
		}, opts...)
	} else {
		err = doer(j.mode)(dctx, wk.b, j.key, func(held context.Context, l lock.Lease) error {
			defer func() { call.FnReturnNs = time.Now().UnixNano() }()
			return wk.hold(held, []lock.Lease{l}, j)
		}, opts...)
	}
	call.ReturnNs = time.Now().UnixNano()
	cancel()
	wk.hist.RecordDo(call)
	return goneAtRelease, err
}

// hold is j's work under its leases (one, or a multi-key job's): a write
// to the register per key, the work or a pause, and a write again.
func (wk *worker) hold(held context.Context, leases []lock.Lease, j job) error {
	write := func() {
		if j.limit != nil || j.mode == rwlock.ModeRead {
			return
		}
		lost := held.Err() != nil && errors.Is(context.Cause(held), lock.ErrLeaseLost)
		for _, l := range leases {
			wk.st.write(wk.reg.Write(l.Key, l.Fence, wk.id, lost), lost)
		}
	}
	write()
	if j.pause {
		wk.st.pauses.Add(1)
		d := 2 * wk.cfg.TTL
		wk.g.freeze(d)
		time.Sleep(d) // ignores held: the whole process is stopped
	} else {
		select {
		case <-held.Done():
		case <-time.After(j.work):
		}
	}
	write()
	return nil
}

// gate freezes a worker's heartbeat: while frozen, Extend and ExtendBatch
// wait, as every goroutine of a paused process would. It is a lock.Hook.
type gate struct {
	until atomic.Int64 // unix nanos
}

func (g *gate) freeze(d time.Duration) { g.until.Store(time.Now().Add(d).UnixNano()) }

// Operation holds Extend and ExtendBatch back while the gate is frozen.
func (g *gate) Operation(next lock.OpFunc) lock.OpFunc {
	return func(ctx context.Context, op *lock.Op) error {
		if op.Kind == lock.OpExtend || op.Kind == lock.OpExtendBatch {
			sleepUntil(time.Unix(0, g.until.Load()))
		}
		return next(ctx, op)
	}
}

func sleepUntil(t time.Time) {
	if d := time.Until(t); d > 0 {
		time.Sleep(d)
	}
}

// workerStats counts what the workers saw.
type workerStats struct {
	mu            sync.Mutex
	outcomes      map[string]int
	pauses        atomic.Int64
	releaseErrors atomic.Int64
	silentLoss    atomic.Int64
	writes        atomic.Int64
	accepted      atomic.Int64
	rejected      atomic.Int64
	afterLoss     atomic.Int64
}

func (s *workerStats) write(accepted, afterLoss bool) {
	s.writes.Add(1)
	if accepted {
		s.accepted.Add(1)
	} else {
		s.rejected.Add(1)
	}
	if afterLoss {
		s.afterLoss.Add(1)
	}
}

// do counts a lock.Do's result, under the job's kind: "" for a lock,
// else what the job took ("slot", "read", "write", "multi").
func (s *workerStats) do(ctx context.Context, kind string, err error) {
	var out string
	switch {
	case err == nil:
		out = "ok"
	case errors.Is(err, lock.ErrLeaseLost):
		out = "lease lost"
	case errors.Is(err, lock.ErrLocked):
		out = "gave up on a busy key"
	case ctx.Err() != nil:
		out = "stopped at the end of the run"
	case errors.Is(err, context.DeadlineExceeded):
		out = "error " + string(lock.CodeOf(err)) + " (Do's context deadline)"
	default:
		out = "error " + string(lock.CodeOf(err))
	}
	if kind != "" {
		out = kind + ": " + out
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outcomes == nil {
		s.outcomes = map[string]int{}
	}
	s.outcomes[out]++
}

func (s *workerStats) into(r *Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.outcomes {
		r.Do[k] = v
	}
	r.Writes = int(s.writes.Load())
	r.Accepted = int(s.accepted.Load())
	r.Rejected = int(s.rejected.Load())
	r.WritesAfterLoss = int(s.afterLoss.Load())
	r.ReleaseErrors = int(s.releaseErrors.Load())
	r.SilentLoss = int(s.silentLoss.Load())
}

// quietLogger drops go-redis's own log lines (dial failures are expected
// here and counted in the report).
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...interface{}) {}
