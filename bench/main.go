// Command bench measures syncguard-go side by side with bsm/redislock,
// go-redsync/redsync (one pool), rueidislock, a raw SET NX PX + DEL
// baseline and a spec-minimal row (syncguard's wire format by the bench's
// own scripts, the least seed 000 requires: specmin.go), against one
// redis-server it starts itself on a free loopback port, every library on
// go-redis's default options, and writes RESULTS.md plus one PNG chart per
// workload next to it.
//
//	go run . -out RESULTS.md                      # what `make bench` runs (< 5 min on 2 cores)
//	go run . -workloads distinct -goroutines 32,128 -contexts background -libs "spec-minimal scripts"
//	go run . -workloads fleet -fleet-cell 10s     # only the hot key across processes, longer
//	go run . -keep-n 1000 -keep-hold 3s -keep-ttl 6s     # a quicker keep-alive workload
//	go run . -workloads limit -out /tmp/limit.md  # only the concurrency limits (syncguard-go alone)
//	go run . -workloads rwlock -out /tmp/rw.md   # only the read-write lock's writers across processes
//	go run . -workloads fleet -libs bsm/redislock # syncguard-go (always) and one peer
//	go run . -workloads handoff                   # the earlier hand-off harness (not run by default)
//
// Workloads: (1) distinct keys at 1, 4, 8, 32 and 128 goroutines, each
// library under three context kinds (-contexts: context.Background(); a
// cancellable context without deadline per cycle, as net/http's request
// context; a 5 s deadline per cycle, as asynq's), with cycles/s, p50/p99
// per cycle and Redis's cost per cycle in every row (CONFIG RESETSTAT
// before each cell, then INFO commandstats usec and calls / cycles, and
// INFO cpu used_cpu_sys+used_cpu_user delta / cycles), allocations per
// cycle from a serial pass; (2) one hot key across 4 OS processes x 4
// goroutines with no handoff rule, hold 0 and 1 ms (acquisitions/s, Jain
// fairness index, max and p99 wait, workers starved for a second, Redis
// commands and Redis CPU per acquisition); (3) fan-out: distinct keys from
// 32 goroutines next to 0, 4 and 16 idle instances (processes) that waited
// for a lock before; (4) N leases held and kept alive (round trips/s,
// goroutines, client CPU); (5) the earlier single-process hand-off harness
// on a hot key, kept for comparison and labelled as such, run only when
// asked (-workloads handoff); (6) concurrency limits, syncguard-go alone
// (see limit.go): slot acquire+release cycles at 32 goroutines next to
// lock cycles, and a hot limit (n = 4, 4 processes x 4 goroutines, hold 1
// ms). Libraries run interleaved within every cell, their order rotating
// between rounds.
//
// Workloads (2) and (3) run the bench binary itself as their worker
// processes (`bench -worker fleet|idle ...`, see fleet.go); the test binary
// does the same through TestMain.
//
// bench is a Go module of its own so that the peers' libraries never enter
// users' go.mod. It still starts its server with testkit/redistest's
// launcher (redistest.Launch), the one every integration test uses: Go's
// internal rule is about import paths, not modules, and
// github.com/syncguard-go/syncguard/bench lies under
// github.com/syncguard-go/syncguard, the parent of internal/. (The replace
// directive only supplies the code; it would not lift the rule for a module
// outside that tree.)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if isWorker(os.Args[1:]) {
		os.Exit(workerMain(os.Args[1:]))
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func defaultConfig() config {
	return config{
		ttl:         10 * time.Second,
		cell:        time.Second,
		warm:        100 * time.Millisecond,
		rounds:      2,
		conc:        []int{1, 4, 8, 32, 128},
		kinds:       allKinds,
		allocCycles: 2000,
		contenders:  16,
		handoffCell: 1500 * time.Millisecond,
		fleetProcs:  4,
		fleetG:      4,
		fleetCell:   4 * time.Second,
		fanoutIdle:  []int{0, 4, 16},
		fanoutG:     32,
		holds:       []time.Duration{0, time.Millisecond},
		keepN:       10000,
		keepHold:    15 * time.Second,
		keepTTL:     30 * time.Second,
		poolSize:    0,
		limitG:      32,
		limitHold:   time.Millisecond,
		rwHold:      time.Millisecond,
	}
}

func run(args []string) error {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	out := fs.String("out", "RESULTS.md", "Markdown report to write; the charts go next to it")
	bin := fs.String("redis-server", "redis-server", "redis-server binary")
	conc := fs.String("goroutines", "1,4,8,32,128", "goroutine counts of the distinct-keys workload")
	kinds := fs.String("contexts", "background,cancel,deadline", "context kinds of the distinct-keys workload: background (context.Background()), cancel (context.WithCancel per cycle, as net/http's request context), deadline (context.WithTimeout 5s per cycle, as asynq's)")
	idle := fs.String("fanout-idle", "0,4,16", "idle instances (processes) of the fan-out workload; the first is the baseline")
	libsFlag := fs.String("libs", "", "comma-separated libraries to run (default all); syncguard-go, the reference of every ratio, always runs")
	only := fs.String("workloads", "distinct,fleet,fanout,keepalive,limit,rwlock", "workloads to run: distinct, fleet, fanout, handoff (= hotkey, the earlier single-process harness, not run by default), keepalive, limit (syncguard-go's concurrency limits only), rwlock (syncguard-go's read-write lock: writers across processes with readers streaming)")
	fs.DurationVar(&cfg.ttl, "ttl", cfg.ttl, "lease TTL of the distinct-keys and hot-key workloads (equal for every library)")
	fs.DurationVar(&cfg.cell, "cell", cfg.cell, "measured time per library per cell (split over -rounds)")
	fs.DurationVar(&cfg.warm, "warm", cfg.warm, "warm-up per library per cell and round")
	fs.IntVar(&cfg.rounds, "rounds", cfg.rounds, "rounds per cell; the library order rotates every round")
	fs.IntVar(&cfg.allocCycles, "alloc-cycles", cfg.allocCycles, "serial cycles per library in the allocation pass")
	fs.IntVar(&cfg.contenders, "contenders", cfg.contenders, "contenders of the single-process hand-off workload")
	fs.DurationVar(&cfg.handoffCell, "handoff-cell", cfg.handoffCell, "measured time per library per cell of the hand-off workload (split over -rounds)")
	fs.IntVar(&cfg.fleetProcs, "fleet-procs", cfg.fleetProcs, "worker processes of the hot key across processes")
	fs.IntVar(&cfg.fleetG, "fleet-goroutines", cfg.fleetG, "goroutines per worker process of the hot key across processes")
	fs.DurationVar(&cfg.fleetCell, "fleet-cell", cfg.fleetCell, "measured window per library and hold of the hot key across processes (>= 1s for the starvation figure)")
	fs.IntVar(&cfg.fanoutG, "fanout-goroutines", cfg.fanoutG, "goroutines of the measured instance in the fan-out workload")
	fs.IntVar(&cfg.keepN, "keep-n", cfg.keepN, "leases kept alive (the issue's goal is stated for 10000)")
	fs.DurationVar(&cfg.keepHold, "keep-hold", cfg.keepHold, "how long the leases are kept alive (15s with TTL 30s: one extend per lease, mid-window, away from its edges)")
	fs.DurationVar(&cfg.keepTTL, "keep-ttl", cfg.keepTTL, "lease TTL in the keep-alive workload; extended every TTL/3 (the goal is stated for 30s)")
	fs.IntVar(&cfg.poolSize, "pool", cfg.poolSize, "go-redis PoolSize, the same for every library (0: go-redis's default, 10 per GOMAXPROCS)")
	fs.IntVar(&cfg.limitG, "limit-goroutines", cfg.limitG, "goroutines of the slot cycles in the limit workloads")
	fs.DurationVar(&cfg.limitHold, "limit-hold", cfg.limitHold, "hold per acquisition on the hot limit")
	fs.DurationVar(&cfg.rwHold, "rw-hold", cfg.rwHold, "hold per write on the hot read-write lock")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of each distinct-keys cell (the bench process: client and harness) to <this>.<library>.g<goroutines>.<context>.<round>.pprof")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	cfg.conc = nil
	for _, f := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -goroutines %q", *conc)
		}
		cfg.conc = append(cfg.conc, n)
	}
	if cfg.kinds, err = parseKinds(*kinds); err != nil {
		return err
	}
	cfg.fanoutIdle = nil
	for _, f := range strings.Split(*idle, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return fmt.Errorf("bad -fanout-idle %q", *idle)
		}
		cfg.fanoutIdle = append(cfg.fanoutIdle, n)
	}
	if cfg.rounds < 1 {
		cfg.rounds = 1
	}
	want := map[string]bool{}
	for _, w := range strings.Split(*only, ",") {
		want[strings.TrimSpace(w)] = true
	}
	want["handoff"] = want["handoff"] || want["hotkey"]

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	began := time.Now()
	srv, err := startServer(*bin)
	if err != nil {
		return err
	}
	defer srv.Close()
	logf := func(format string, a ...any) {
		fmt.Fprintf(os.Stderr, "[%5.1fs] "+format+"\n", append([]any{time.Since(began).Seconds()}, a...)...)
	}
	logf("redis-server %s on %s", srv.Version, srv.Addr())
	libs, err := pickLibraries(*libsFlag)
	if err != nil {
		return err
	}
	e := &env{srv: srv, cfg: cfg, libs: libs, log: logf}

	res := &results{cfg: cfg, machine: machineInfo(srv)}
	if want["distinct"] {
		if res.distinct, err = e.runDistinct(ctx); err != nil {
			return err
		}
		if res.allocs, err = e.runAllocs(ctx); err != nil {
			return err
		}
	}
	if want["fleet"] {
		if res.fleet, err = e.runFleet(ctx); err != nil {
			return err
		}
	}
	if want["fanout"] {
		if res.fanout, err = e.runFanout(ctx); err != nil {
			return err
		}
	}
	if want["handoff"] {
		if res.hot, err = e.runHot(ctx); err != nil {
			return err
		}
	}
	if want["keepalive"] {
		if res.keep, err = e.runKeep(ctx); err != nil {
			return err
		}
	}
	if want["limit"] {
		if res.limit, err = e.runLimit(ctx); err != nil {
			return err
		}
	}
	if want["rwlock"] {
		if res.rw, err = e.runRW(ctx); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	res.elapsed = time.Since(began)
	res.machine.LoadEnd = loadAvg()

	dir := filepath.Dir(*out)
	if res.charts, err = writeCharts(res, dir); err != nil {
		return err
	}
	if err := os.WriteFile(*out, []byte(res.markdown()), 0o644); err != nil {
		return err
	}
	logf("wrote %s and %s in %v", *out, strings.Join(res.charts, ", "), time.Since(began).Round(time.Second))
	return nil
}
