package main

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// config is what the flags set.
type config struct {
	ttl         time.Duration // lease TTL for the distinct and hot-key workloads, equal for all
	cell        time.Duration // measured time per library per cell, split over rounds
	warm        time.Duration // warm-up per library per cell and round
	rounds      int           // rounds per cell; library order rotates every round
	conc        []int         // goroutines for the distinct-keys workload
	kinds       []ctxKind     // context kinds of the distinct-keys workload
	allocCycles int           // serial cycles of the allocation pass
	contenders  int           // hot-key contenders of the single-process hand-off workload
	handoffCell time.Duration // measured time per library per cell of the hand-off workload
	fleetProcs  int           // hot key across processes: worker processes
	fleetG      int           // ... goroutines per process
	fleetCell   time.Duration // ... measured window per library and hold
	fanoutIdle  []int         // fan-out: idle instances (processes) next to the measured one
	fanoutG     int           // ... goroutines of the measured instance
	holds       []time.Duration
	keepN       int
	keepHold    time.Duration
	keepTTL     time.Duration
	poolSize    int
	limitG      int           // limit workloads: goroutines of the slot cycles
	limitHold   time.Duration // ... hold on the hot limit
	rwHold      time.Duration // hold per write on the hot read-write lock
	// cpuProfile, when set, is the start of the paths of CPU profiles of
	// the distinct-keys cells, one per library, goroutine count and round
	// (profile.go).
	cpuProfile string
}

// env is a running server and the libraries under test.
type env struct {
	srv  *server
	cfg  config
	libs []library
	log  func(format string, args ...any)
}

// instance is a library on a client of its own.
type instance struct {
	*impl
	count *counter
	close func() error
}

func (e *env) instance(l library, ttl time.Duration) (*instance, error) {
	rdb, n := e.srv.newClient(e.cfg.poolSize)
	im, err := l.make(rdb, ttl)
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	closeAll := func() error {
		if im.close != nil {
			_ = im.close()
		}
		return rdb.Close()
	}
	return &instance{impl: im, count: n, close: closeAll}, nil
}

// rotate returns libs rotated left by r, so every library takes every slot.
func rotate[T any](s []T, r int) []T {
	if len(s) == 0 {
		return s
	}
	r %= len(s)
	return append(slices.Clone(s[r:]), s[:r]...)
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// ---------- (1) distinct keys ----------

// ctxKind is the context a distinct-keys cycle runs under, one of the
// three kinds programs pass (issue 25, decision 4).
type ctxKind int

const (
	// ctxBackground: context.Background(), as a job or a loop has.
	ctxBackground ctxKind = iota
	// ctxCancel: a cancellable context without a deadline, new per cycle
	// (context.WithCancel), as net/http's request context.
	ctxCancel
	// ctxDeadline: a 5 s deadline, new per cycle (context.WithTimeout), as
	// asynq's task context.
	ctxDeadline
)

var allKinds = []ctxKind{ctxBackground, ctxCancel, ctxDeadline}

// flagName is the kind's name in -contexts.
func (k ctxKind) flagName() string {
	return [...]string{"background", "cancel", "deadline"}[k]
}

// String is the kind's name in the report.
func (k ctxKind) String() string {
	return [...]string{"Background", "cancellable", "5 s deadline"}[k]
}

// Go is how the kind is made, for the report.
func (k ctxKind) Go() string {
	return [...]string{"`context.Background()`", "`context.WithCancel(context.Background())` per cycle", "`context.WithTimeout(context.Background(), 5*time.Second)` per cycle"}[k]
}

func parseKinds(s string) ([]ctxKind, error) {
	var out []ctxKind
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		i := slices.IndexFunc(allKinds, func(k ctxKind) bool { return k.flagName() == f })
		if i < 0 {
			return nil, fmt.Errorf("bad -contexts %q (background, cancel, deadline)", s)
		}
		if !slices.Contains(out, allKinds[i]) {
			out = append(out, allKinds[i])
		}
	}
	return out, nil
}

// cycle runs one cycle of inst on key under a context of kind k.
func (k ctxKind) cycle(inst *instance, key string) error {
	switch k {
	case ctxCancel:
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		return inst.cycle(ctx, key)
	case ctxDeadline:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return inst.cycle(ctx, key)
	}
	return inst.cycle(context.Background(), key)
}

// redisCost is what a cell cost Redis: INFO commandstats after a CONFIG
// RESETSTAT at the start of the cell (the harness's own commands left
// out), and the server's CPU (INFO cpu used_cpu_sys + used_cpu_user) over
// the cell.
type redisCost struct {
	Calls int64              // commands, those run by scripts included
	Usec  int64              // their usec, summed as Redis reports it
	CPU   float64            // seconds
	ByCmd map[string]cmdStat // per command
}

func (c *redisCost) add(o redisCost) {
	c.Calls += o.Calls
	c.Usec += o.Usec
	c.CPU += o.CPU
	if c.ByCmd == nil {
		c.ByCmd = map[string]cmdStat{}
	}
	for k, v := range o.ByCmd {
		s := c.ByCmd[k]
		s.Calls += v.Calls
		s.Usec += v.Usec
		c.ByCmd[k] = s
	}
}

// costMeter measures one cell's redisCost.
type costMeter struct {
	admin *redis.Client
	cpu0  float64
}

// start resets Redis's command statistics and samples its CPU.
func (m *costMeter) start(ctx context.Context) error {
	if err := m.admin.ConfigResetStat(ctx).Err(); err != nil {
		return err
	}
	cpu, err := redisCPU(ctx, m.admin)
	m.cpu0 = cpu
	return err
}

// stop returns the cost since start.
func (m *costMeter) stop(ctx context.Context) (redisCost, error) {
	st, err := commandStats(ctx, m.admin)
	if err != nil {
		return redisCost{}, err
	}
	cpu, err := redisCPU(ctx, m.admin)
	if err != nil {
		return redisCost{}, err
	}
	c := redisCost{CPU: cpu - m.cpu0, ByCmd: st}
	for _, s := range st {
		c.Calls += s.Calls
		c.Usec += s.Usec
	}
	return c, nil
}

type distinctResult struct {
	Lib        string
	Goroutines int
	Ctx        ctxKind
	Cycles     int64
	Errors     int64
	Seconds    float64
	P50, P99   time.Duration
	Redis      redisCost
	// ClientCPU is the bench process's user+sys CPU (getrusage) over the
	// cell: the library's client side, and the harness's own loop.
	ClientCPU time.Duration
}

func (r distinctResult) Rate() float64 { return float64(r.Cycles) / r.Seconds }

// CmdUs is Redis's command time per cycle, µs: the usec of every command
// in INFO commandstats / cycles. A script's usec includes the commands it
// ran, which Redis also counts under their own names.
func (r distinctResult) CmdUs() float64 { return perCycle(float64(r.Redis.Usec), r.Cycles) }

// CPUUs is Redis's CPU per cycle, µs.
func (r distinctResult) CPUUs() float64 { return perCycle(r.Redis.CPU*1e6, r.Cycles) }

// ClientUs is the bench process's CPU per cycle, µs.
func (r distinctResult) ClientUs() float64 {
	return perCycle(float64(r.ClientCPU.Nanoseconds())/1e3, r.Cycles)
}

// CmdsPer is Redis commands per cycle (those run by scripts included).
func (r distinctResult) CmdsPer() float64 { return perCycle(float64(r.Redis.Calls), r.Cycles) }

func perCycle(x float64, cycles int64) float64 {
	if cycles == 0 {
		return 0
	}
	return x / float64(cycles)
}

type allocResult struct {
	Lib       string
	PerCycle  float64
	BytesPer  float64
	Cycles    int
	ErrCycles int
}

var keySeq atomic.Int64

// runDistinct measures acquire+release cycles on distinct keys: each
// goroutine owns one key, reused every cycle; every library under every
// context kind it runs with (library.kinds), with Redis's cost of each
// cell.
func (e *env) runDistinct(ctx context.Context) ([]distinctResult, error) {
	admin, _ := e.srv.newClient(2)
	defer admin.Close()
	meter := &costMeter{admin: admin}
	var out []distinctResult
	type cellKey struct {
		kind ctxKind
		lib  string
	}
	for _, g := range e.cfg.conc {
		acc := map[cellKey]*distinctResult{}
		lat := map[cellKey][]time.Duration{}
		// Within a round every kind runs every library; kinds and
		// libraries rotate between rounds, so drift in the machine's load
		// hits every kind and library alike.
		for round := 0; round < e.cfg.rounds; round++ {
			for ki, kind := range rotate(e.cfg.kinds, round) {
				var libs []library
				for _, l := range e.libs {
					if l.runsWith(kind) {
						libs = append(libs, l)
					}
				}
				for _, l := range rotate(libs, round+g+ki) {
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					inst, err := e.instance(l, e.cfg.ttl)
					if err != nil {
						return nil, err
					}
					tag := "d" + strconv.FormatInt(keySeq.Add(1), 10) + ":"
					if e.cfg.warm > 0 {
						distinctCell(ctx, inst, g, kind, e.cfg.warm, tag)
					}
					if err := meter.start(ctx); err != nil {
						_ = inst.close()
						return nil, err
					}
					stopProf := e.cellProfile(l.name, g, kind, round)
					r, ls := distinctCell(ctx, inst, g, kind, e.cfg.cell/time.Duration(e.cfg.rounds), tag)
					stopProf()
					cost, err := meter.stop(ctx)
					_ = inst.close()
					if err != nil {
						return nil, err
					}
					k := cellKey{kind, l.name}
					a := acc[k]
					if a == nil {
						a = &distinctResult{Lib: l.name, Goroutines: g, Ctx: kind}
						acc[k] = a
					}
					a.Cycles += r.Cycles
					a.Errors += r.Errors
					a.Seconds += r.Seconds
					a.Redis.add(cost)
					a.ClientCPU += r.ClientCPU
					lat[k] = append(lat[k], ls...)
				}
			}
		}
		for _, kind := range e.cfg.kinds {
			for _, l := range e.libs {
				k := cellKey{kind, l.name}
				a := acc[k]
				if a == nil {
					continue
				}
				ls := lat[k]
				slices.Sort(ls)
				a.P50, a.P99 = percentile(ls, 0.50), percentile(ls, 0.99)
				e.log("distinct g=%-3d %-12s %-20s %9.0f cycles/s  p50 %-9v p99 %-9v  Redis %5.1f µs cmd %5.1f µs CPU %5.2f cmds /cycle  client %5.1f µs CPU /cycle  errors %d",
					g, kind, l.name, a.Rate(), a.P50, a.P99, a.CmdUs(), a.CPUUs(), a.CmdsPer(), a.ClientUs(), a.Errors)
				out = append(out, *a)
			}
		}
	}
	return out, nil
}

func distinctCell(ctx context.Context, inst *instance, g int, kind ctxKind, d time.Duration, tag string) (distinctResult, []time.Duration) {
	var cycles, errs atomic.Int64
	lats := make([][]time.Duration, g)
	var wg sync.WaitGroup
	cpu0 := cpuTime()
	start := time.Now()
	end := start.Add(d)
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			key := tag + strconv.Itoa(i)
			ls := make([]time.Duration, 0, 1024)
			for {
				t0 := time.Now()
				if !t0.Before(end) || ctx.Err() != nil {
					break
				}
				if err := kind.cycle(inst, key); err != nil {
					errs.Add(1)
					continue
				}
				ls = append(ls, time.Since(t0))
				cycles.Add(1)
			}
			lats[i] = ls
		}(i)
	}
	wg.Wait()
	secs, cpu := time.Since(start).Seconds(), cpuTime()-cpu0
	var all []time.Duration
	for _, ls := range lats {
		all = append(all, ls...)
	}
	return distinctResult{Goroutines: g, Ctx: kind, Cycles: cycles.Load(), Errors: errs.Load(), Seconds: secs, ClientCPU: cpu}, all
}

// runAllocs counts heap allocations per acquire+release cycle in a serial
// pass (one goroutine, one key, context.Background(), or the one context
// kind of a row that runs with one only), libraries interleaved.
func (e *env) runAllocs(ctx context.Context) ([]allocResult, error) {
	acc := map[string]*allocResult{}
	for round := 0; round < e.cfg.rounds; round++ {
		for _, l := range rotate(e.libs, round) {
			inst, err := e.instance(l, e.cfg.ttl)
			if err != nil {
				return nil, err
			}
			key := "a" + strconv.FormatInt(keySeq.Add(1), 10)
			kind := l.allocKind()
			for i := 0; i < 200; i++ { // warm the pool, scripts and caches
				_ = kind.cycle(inst, key)
			}
			n := e.cfg.allocCycles / e.cfg.rounds
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			bad := 0
			for i := 0; i < n; i++ {
				if kind.cycle(inst, key) != nil {
					bad++
				}
			}
			runtime.ReadMemStats(&after)
			_ = inst.close()
			a := acc[l.name]
			if a == nil {
				a = &allocResult{Lib: l.name}
				acc[l.name] = a
			}
			a.Cycles += n
			a.ErrCycles += bad
			a.PerCycle += float64(after.Mallocs - before.Mallocs)
			a.BytesPer += float64(after.TotalAlloc - before.TotalAlloc)
		}
	}
	var out []allocResult
	for _, l := range e.libs {
		a := acc[l.name]
		a.PerCycle /= float64(a.Cycles)
		a.BytesPer /= float64(a.Cycles)
		e.log("allocs %-20s %6.1f allocs/cycle %7.0f B/cycle", l.name, a.PerCycle, a.BytesPer)
		out = append(out, *a)
	}
	return out, nil
}

// ---------- (2) hot key ----------

type hotResult struct {
	Lib         string
	Hold        time.Duration
	Successes   int64
	Failures    int64 // gave up (the library's retry budget ran out)
	Seconds     float64
	P50, P99    time.Duration // handoff: release returned -> next acquire returned
	Mean        time.Duration
	Handoffs    int   // successions to a waiter (the handoff figures)
	Successions int   // successions in all
	Commands    int64 // INFO commandstats calls delta (includes commands run by scripts)
	RoundTrips  int64 // client round trips (go-redis hook)
}

func (r hotResult) Rate() float64 { return float64(r.Successes) / r.Seconds }
func (r hotResult) CmdsPerAcq() float64 {
	if r.Successes == 0 {
		return 0
	}
	return float64(r.Commands) / float64(r.Successes)
}
func (r hotResult) RTPerAcq() float64 {
	if r.Successes == 0 {
		return 0
	}
	return float64(r.RoundTrips) / float64(r.Successes)
}

// handoffs records holder generations. Holders of one key are totally
// ordered, and holder k+1's acquire returns after holder k's returned, so
// the order of acquire returns is the order of holders. The handoff to k+1
// is acq[k+1] - relEnd[k] (0 when the releaser's reply came last), counted
// only when k+1 was a waiter: its acquire call began before holder k began
// to release, so it was waiting through the release.
type handoffs struct {
	mu       sync.Mutex
	call     []time.Time // when holder k's acquire call began
	acq      []time.Time // when it returned
	relStart []time.Time
	relEnd   []time.Time
	next     chan struct{} // closed at the next acquisition
}

func newHandoffs() *handoffs { return &handoffs{next: make(chan struct{})} }

// acquired records an acquisition (when record is set) and returns its
// generation (-1 when not recorded) and a channel closed at the next one.
func (h *handoffs) acquired(call, t time.Time, record bool) (int, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.next)
	h.next = make(chan struct{})
	if !record {
		return -1, h.next
	}
	h.call = append(h.call, call)
	h.acq = append(h.acq, t)
	h.relStart = append(h.relStart, time.Time{})
	h.relEnd = append(h.relEnd, time.Time{})
	return len(h.acq) - 1, h.next
}

func (h *handoffs) released(g int, start, end time.Time) {
	h.mu.Lock()
	h.relStart[g], h.relEnd[g] = start, end
	h.mu.Unlock()
}

// durations returns the sorted waiter handoffs and how many successions
// there were in all (waiter or not).
func (h *handoffs) durations() (out []time.Duration, successions int) {
	for k := 1; k < len(h.acq); k++ {
		if h.relEnd[k-1].IsZero() {
			continue
		}
		successions++
		if !h.call[k].Before(h.relStart[k-1]) {
			continue // arrived during or after the release: not a waiter
		}
		out = append(out, max(0, h.acq[k].Sub(h.relEnd[k-1])))
	}
	slices.Sort(out)
	return out, successions
}

func (e *env) runHot(ctx context.Context) ([]hotResult, error) {
	var out []hotResult
	admin, _ := e.srv.newClient(2)
	defer admin.Close()
	hotLibs := e.libs[:0:0]
	for _, l := range e.libs {
		if !l.distinctOnly {
			hotLibs = append(hotLibs, l)
		}
	}
	for hi, hold := range e.cfg.holds {
		acc := map[string]*hotResult{}
		var hs = map[string][]time.Duration{}
		for round := 0; round < e.cfg.rounds; round++ {
			for _, l := range rotate(hotLibs, round+hi) {
				inst, err := e.instance(l, e.cfg.ttl)
				if err != nil {
					return nil, err
				}
				key := "hot" + strconv.FormatInt(keySeq.Add(1), 10)
				if e.cfg.warm > 0 {
					// on a key of its own: a waiter cut short by the warm-up's
					// deadline must not leave the measured key held
					hotCell(ctx, inst, key+"w", e.cfg.contenders, hold, e.cfg.warm)
				}
				c0, err := commandCalls(ctx, admin)
				if err != nil {
					return nil, err
				}
				rt0 := inst.count.n.Load()
				r, h, succ := hotCell(ctx, inst, key, e.cfg.contenders, hold, e.cfg.handoffCell/time.Duration(e.cfg.rounds))
				rt1 := inst.count.n.Load()
				c1, err := commandCalls(ctx, admin)
				if err != nil {
					return nil, err
				}
				_ = inst.close()
				a := acc[l.name]
				if a == nil {
					a = &hotResult{Lib: l.name, Hold: hold}
					acc[l.name] = a
				}
				a.Successes += r.Successes
				a.Failures += r.Failures
				a.Seconds += r.Seconds
				a.Commands += c1 - c0
				a.RoundTrips += rt1 - rt0
				a.Successions += succ
				hs[l.name] = append(hs[l.name], h...)
			}
		}
		for _, l := range hotLibs {
			a := acc[l.name]
			h := hs[l.name]
			slices.Sort(h)
			a.Handoffs = len(h)
			a.P50, a.P99 = percentile(h, 0.5), percentile(h, 0.99)
			if len(h) > 0 {
				var sum time.Duration
				for _, d := range h {
					sum += d
				}
				a.Mean = sum / time.Duration(len(h))
			}
			e.log("hot hold=%-4v %-20s %8.1f acq/s  handoff p50 %-10v mean %-10v p99 %-10v %5.1f cmds/acq %5.1f rt/acq gave-up %d waiter-handoffs %d/%d",
				hold, l.name, a.Rate(), a.P50, a.Mean.Round(time.Microsecond), a.P99, a.CmdsPerAcq(), a.RTPerAcq(), a.Failures, a.Handoffs, a.Successions)
			out = append(out, *a)
		}
	}
	return out, nil
}

// hotCell runs n contenders on one key for d. A contender that has just
// released waits until another contender has acquired (at most
// yieldCap) before it tries again, so every handoff goes to a waiter, as
// with n distinct requesters, and does not measure the releaser taking the
// lock straight back while the others sleep. Acquisitions returning after
// d are not counted; waiters still waiting at d are cancelled.
func hotCell(ctx context.Context, inst *instance, key string, n int, hold, d time.Duration) (hotResult, []time.Duration, int) {
	const yieldCap = time.Second
	var ok, failed atomic.Int64
	h := newHandoffs()
	start := time.Now()
	end := start.Add(d)
	cctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			yield := time.NewTimer(yieldCap)
			defer yield.Stop()
			for cctx.Err() == nil {
				call := time.Now()
				release, err := inst.hot(cctx, key)
				now := time.Now()
				if err != nil {
					if cctx.Err() == nil {
						failed.Add(1)
					}
					continue
				}
				record := now.Before(end)
				if record {
					ok.Add(1)
				}
				g, next := h.acquired(call, now, record)
				if hold > 0 {
					time.Sleep(hold)
				}
				rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
				relStart := time.Now()
				err = release(rctx)
				rcancel()
				if err == nil && g >= 0 {
					h.released(g, relStart, time.Now())
				}
				yield.Reset(yieldCap)
				select {
				case <-next:
				case <-yield.C:
				case <-cctx.Done():
				}
			}
		}()
	}
	wg.Wait()
	ds, succ := h.durations()
	return hotResult{Successes: ok.Load(), Failures: failed.Load(), Seconds: d.Seconds()}, ds, succ
}

// ---------- (3) keep-alive ----------

type keepResult struct {
	Lib           string
	Leases        int
	Seconds       float64
	TTL           time.Duration
	RoundTrips    int64 // client round trips during the hold (go-redis hook)
	Commands      int64 // INFO commandstats delta during the hold
	Goroutines    int   // max NumGoroutine during the hold minus before Keep started
	CPU           time.Duration
	AcquireErrors int
}

func (r keepResult) RTPerSec() float64  { return float64(r.RoundTrips) / r.Seconds }
func (r keepResult) CmdPerSec() float64 { return float64(r.Commands) / r.Seconds }

// ExtrapolatedRT scales the measured round trips/s linearly to the goal's
// shape (goalN leases, TTL goalTTL, extended every TTL/3). Exact for one
// extend per lease per interval; an upper bound for a batching scheduler
// whose round trips grow slower than the lease count.
func (r keepResult) ExtrapolatedRT(goalN int, goalTTL time.Duration) float64 {
	return r.RTPerSec() * float64(goalN) / float64(r.Leases) * r.TTL.Seconds() / goalTTL.Seconds()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func (e *env) runKeep(ctx context.Context) ([]keepResult, error) {
	var out []keepResult
	admin, _ := e.srv.newClient(2)
	defer admin.Close()
	for _, l := range e.libs {
		if l.distinctOnly {
			continue
		}
		inst, err := e.instance(l, e.cfg.keepTTL)
		if err != nil {
			return nil, err
		}
		r, err := keepCell(ctx, e, admin, inst, l.name)
		_ = inst.close()
		if err != nil {
			return nil, err
		}
		e.log("keep %-20s %d leases %.0fs: %7.1f round trips/s  %7.1f cmds/s  +%d goroutines  CPU %v",
			l.name, r.Leases, r.Seconds, r.RTPerSec(), r.CmdPerSec(), r.Goroutines, r.CPU.Round(time.Millisecond))
		out = append(out, r)
	}
	return out, nil
}

func keepCell(ctx context.Context, e *env, admin *redis.Client, inst *instance, name string) (keepResult, error) {
	n := e.cfg.keepN
	tag := "k" + strconv.FormatInt(keySeq.Add(1), 10) + ":"
	leases := make([]kept, n)
	var acqErr atomic.Int64
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				// a few tries: on a loaded machine rueidislock's non-waiting
				// acquire gives up after its 20 ms TryNextAfter
				k, err := inst.lease(ctx, tag+strconv.Itoa(i))
				for try := 1; err != nil && try < 5 && ctx.Err() == nil; try++ {
					k, err = inst.lease(ctx, tag+strconv.Itoa(i))
				}
				if err != nil {
					acqErr.Add(1)
					continue
				}
				leases[i] = k
			}
		}()
	}
	wg.Wait()
	if acqErr.Load() > 0 {
		return keepResult{}, fmt.Errorf("%s: %d of %d leases not acquired", name, acqErr.Load(), n)
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	g0 := runtime.NumGoroutine()
	c0, err := commandCalls(ctx, admin)
	if err != nil {
		return keepResult{}, err
	}
	rt0 := inst.count.n.Load()
	cpu0 := cpuTime()
	start := time.Now()
	for _, k := range leases {
		k.start()
	}
	gmax := 0
	for end := start.Add(e.cfg.keepHold); time.Now().Before(end); {
		time.Sleep(min(250*time.Millisecond, time.Until(end)))
		gmax = max(gmax, runtime.NumGoroutine())
	}
	secs := time.Since(start).Seconds()
	rt1 := inst.count.n.Load()
	cpu1 := cpuTime()
	c1, err := commandCalls(ctx, admin)
	if err != nil {
		return keepResult{}, err
	}
	for _, k := range leases {
		k.stop()
	}
	for _, k := range leases {
		_ = k.release(ctx)
	}
	return keepResult{
		Lib: name, Leases: n, Seconds: secs, TTL: e.cfg.keepTTL,
		RoundTrips: rt1 - rt0, Commands: c1 - c0,
		Goroutines: max(0, gmax-g0), CPU: cpu1 - cpu0,
	}, nil
}
