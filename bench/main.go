// Command bench measures syncguard-go side by side with bsm/redislock,
// go-redsync/redsync (one pool) and a raw SET NX PX + DEL baseline, against
// one redis-server it starts itself on a free loopback port, and writes
// RESULTS.md plus one PNG chart per workload next to it.
//
//	go run . -out RESULTS.md                      # what `make bench` runs (< 5 min)
//	go run . -keep-n 1000 -keep-hold 10s -keep-ttl 6s     # a quicker keep-alive workload
//
// Workloads: (1) distinct keys at 1, 8, 32 and 128 goroutines (cycles/s,
// p50/p99 per cycle, allocations per cycle from a serial pass); (2) one hot
// key, 16 contenders, hold 0 and 1 ms (acquisitions/s, p50/p99 handoff,
// Redis commands and round trips per acquisition); (3) N leases held and
// kept alive (round trips/s, goroutines, client CPU). Libraries run
// interleaved within every cell, their order rotating between rounds.
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
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func defaultConfig() config {
	return config{
		ttl:         10 * time.Second,
		cell:        3 * time.Second,
		warm:        300 * time.Millisecond,
		rounds:      2,
		conc:        []int{1, 8, 32, 128},
		allocCycles: 4000,
		contenders:  16,
		holds:       []time.Duration{0, time.Millisecond},
		keepN:       10000,
		keepHold:    30 * time.Second,
		keepTTL:     30 * time.Second,
		poolSize:    64,
	}
}

func run(args []string) error {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	out := fs.String("out", "RESULTS.md", "Markdown report to write; the charts go next to it")
	bin := fs.String("redis-server", "redis-server", "redis-server binary")
	conc := fs.String("goroutines", "1,8,32,128", "goroutine counts of the distinct-keys workload")
	only := fs.String("workloads", "distinct,hotkey,keepalive", "workloads to run")
	fs.DurationVar(&cfg.ttl, "ttl", cfg.ttl, "lease TTL of the distinct-keys and hot-key workloads (equal for every library)")
	fs.DurationVar(&cfg.cell, "cell", cfg.cell, "measured time per library per cell (split over -rounds)")
	fs.DurationVar(&cfg.warm, "warm", cfg.warm, "warm-up per library per cell and round")
	fs.IntVar(&cfg.rounds, "rounds", cfg.rounds, "rounds per cell; the library order rotates every round")
	fs.IntVar(&cfg.allocCycles, "alloc-cycles", cfg.allocCycles, "serial cycles per library in the allocation pass")
	fs.IntVar(&cfg.contenders, "contenders", cfg.contenders, "hot-key contenders")
	fs.IntVar(&cfg.keepN, "keep-n", cfg.keepN, "leases kept alive (the issue's goal is stated for 10000)")
	fs.DurationVar(&cfg.keepHold, "keep-hold", cfg.keepHold, "how long the leases are kept alive (the issue says 30s)")
	fs.DurationVar(&cfg.keepTTL, "keep-ttl", cfg.keepTTL, "lease TTL in the keep-alive workload; extended every TTL/3 (the goal is stated for 30s)")
	fs.IntVar(&cfg.poolSize, "pool", cfg.poolSize, "go-redis PoolSize, the same for every library")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.conc = nil
	for _, f := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -goroutines %q", *conc)
		}
		cfg.conc = append(cfg.conc, n)
	}
	if cfg.rounds < 1 {
		cfg.rounds = 1
	}
	want := map[string]bool{}
	for _, w := range strings.Split(*only, ",") {
		want[strings.TrimSpace(w)] = true
	}

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
	logf("redis-server %s on %s", srv.Version, srv.Addr)
	e := &env{srv: srv, cfg: cfg, libs: libraries, log: logf}

	res := &results{cfg: cfg, machine: machineInfo(srv)}
	if want["distinct"] {
		if res.distinct, err = e.runDistinct(ctx); err != nil {
			return err
		}
		if res.allocs, err = e.runAllocs(ctx); err != nil {
			return err
		}
	}
	if want["hotkey"] {
		if res.hot, err = e.runHot(ctx); err != nil {
			return err
		}
	}
	if want["keepalive"] {
		if res.keep, err = e.runKeep(ctx); err != nil {
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
