// Command cyclecpu measures what a lock cycle costs the client, in the
// shape of the team's independent harness (bench/README.md, "In the
// team's harness"): one redis-server on loopback, every library on a
// go-redis client of its own (PoolSize 64, other options default); for g
// goroutines each looping on one key of its own (reused),
// Backend.Acquire(ctx, key, ttl) then Backend.Release(ctx, id) for
// syncguard-go, Obtain then Release for bsm/redislock; cells of a few
// seconds, the libraries' order rotating every round. Each cell runs in a
// child process of its own, so getrusage(RUSAGE_SELF) user+sys over the
// cell is that library's client alone (and the loop, the same for both).
//
//	go run ./cyclecpu                                   # 1,4,8,32,128 goroutines, Background and deadline, 3 rounds
//	go run ./cyclecpu -goroutines 4 -contexts background -rounds 5
//	go run ./cyclecpu -hook -latency                    # bench/'s loop: a round-trip hook and a latency sample per cycle
//
// A child (-child) can run a fixed number of cycles (-n) instead of a
// duration, for instruction counts under valgrind --tool=callgrind.
package main

import (
	"context"
	"encoding/json"

	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/syncguard-go/syncguard/bench/internal/specmin"
	"github.com/syncguard-go/syncguard/redisbackend"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

const (
	libOurs      = "syncguard-go"
	libRedislock = "bsm/redislock"
	// libOursDirect is syncguard-go with DisableCoalescing: what the
	// coalescer's bookkeeping costs a cycle.
	libOursDirect = "syncguard-go/nocoalesce"
	// libRedislockBounded is bsm/redislock with each call bounded by its
	// context's deadline as syncguard-go bounds it on go-redis's default
	// options (a goroutine waits on the reply): the floor of that promise.
	libRedislockBounded = "bsm/redislock/bounded"
	// libSpecMin is syncguard's wire format with the least the
	// specification requires (bench/internal/specmin) by go-redis's
	// Script.Run: the floor of the format's cycle on this client.
	libSpecMin = "specmin"
)

// cellSpec is one cell, as the parent passes it to a child.
type cellSpec struct {
	Addr       string
	Lib        string
	Goroutines int
	Ctx        string // background, deadline
	Warm       time.Duration
	Cell       time.Duration
	N          int64 // cycles per goroutine instead of Cell when > 0
	Pool       int
	Hook       bool // a counting go-redis hook on the client, as bench/'s
	Latency    bool // a time.Now pair and a latency sample per cycle, as bench/'s
	Tag        string
	Profile    string // CPU profile of the measured cell, when set
	MemProfile string // allocation profile (every allocation) of the measured cell, when set
}

// cellResult is what a child reports.
type cellResult struct {
	Cycles   int64
	Errors   int64
	Seconds  float64
	CPU      time.Duration // user+sys over the cell
	Mallocs  uint64
	FirstErr string
}

func main() {
	child := flag.String("child", "", "run one cell (JSON cellSpec) and print its result (internal)")
	bin := flag.String("redis-server", "redis-server", "redis-server binary")
	conc := flag.String("goroutines", "1,4,8,32,128", "goroutine counts")
	ctxs := flag.String("contexts", "background,deadline", "background (context.Background()), deadline (context.WithTimeout 5 s per cycle)")
	libs := flag.String("libs", libOurs+","+libRedislock, "libraries, rotating every round; the last is every ratio's reference (also: "+
		strings.Join([]string{libSpecMin, libRedislockBounded, libOursDirect}, ", ")+")")
	rounds := flag.Int("rounds", 3, "rounds")
	cell := flag.Duration("cell", 2500*time.Millisecond, "measured time per cell")
	warm := flag.Duration("warm", 300*time.Millisecond, "warm-up per cell (not measured)")
	pool := flag.Int("pool", 64, "go-redis PoolSize")
	hook := flag.Bool("hook", false, "add bench/'s round-trip counting hook to every client")
	latency := flag.Bool("latency", false, "sample every cycle's latency, as bench/'s loop does")
	prof := flag.String("cpuprofile", "", "write each cell's CPU profile to <this>.<library>.g<goroutines>.<context>.<round>.pprof")
	memprof := flag.String("memprofile", "", "write each cell's allocation profile to <this>.<library>.g<goroutines>.<context>.<round>.pprof")
	flag.Parse()
	if *child != "" {
		os.Exit(runChild(*child))
	}
	if err := run(*bin, *conc, *ctxs, *libs, *rounds, *cell, *warm, *pool, *hook, *latency, *prof, *memprof); err != nil {
		fmt.Fprintln(os.Stderr, "cyclecpu:", err)
		os.Exit(1)
	}
}

func run(bin, conc, ctxs, libList string, rounds int, cell, warm time.Duration, pool int, hook, latency bool, prof, memprof string) error {
	var gs []int
	for _, f := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("bad -goroutines %q", conc)
		}
		gs = append(gs, n)
	}
	kinds := strings.Split(ctxs, ",")
	libs := strings.Split(libList, ",")
	srv, err := redistest.Launch(bin)
	if err != nil {
		return err
	}
	defer srv.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	type key struct {
		g    int
		kind string
		lib  string
	}
	res := map[key][]cellResult{}
	seq := 0
	for r := 0; r < rounds; r++ {
		for _, g := range gs {
			for _, kind := range kinds {
				order := slices.Clone(libs)
				k := (r + g) % len(order)
				order = append(order[k:], order[:k]...)
				for _, lib := range order {
					seq++
					spec := cellSpec{Addr: srv.Addr(), Lib: lib, Goroutines: g, Ctx: kind, Warm: warm, Cell: cell,
						Pool: pool, Hook: hook, Latency: latency, Tag: "c" + strconv.Itoa(seq)}
					name := fmt.Sprintf(".%s.g%d.%s.%d.pprof", strings.ReplaceAll(lib, "/", "_"), g, kind, r)
					if prof != "" {
						spec.Profile = prof + name
					}
					if memprof != "" {
						spec.MemProfile = memprof + name
					}
					out, err := runCell(self, spec)
					if err != nil {
						return err
					}
					res[key{g, kind, lib}] = append(res[key{g, kind, lib}], out)
					fmt.Fprintf(os.Stderr, "round %d g=%-3d %-10s %-14s %8.0f cycles/s %6.1f µs CPU/cycle %5.1f allocs/cycle errors %d %s\n",
						r, g, kind, lib, float64(out.Cycles)/out.Seconds, us(out.CPU, out.Cycles),
						float64(out.Mallocs)/float64(max(out.Cycles, 1)), out.Errors, out.FirstErr)
				}
			}
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("cyclecpu: %d rounds, cells of %v, PoolSize %d, hook %v, latency samples %v; load at the end %s\n",
		rounds, cell, pool, hook, latency, strings.Fields(string(load))[0:3])
	ref := libs[len(libs)-1]
	fmt.Printf("ratios are library / %s in the same round (CPU: below 1 the library uses less; cycles/s: above 1 it is faster)\n\n", ref)
	fmt.Println("| goroutines | context | library | cycles/s | client µs/cycle | allocs/cycle | cycles/s ratio by round | CPU/cycle ratio by round | median CPU ratio |")
	fmt.Println("|---:|---|---|---:|---:|---:|---|---|---:|")
	for _, g := range gs {
		for _, kind := range kinds {
			for _, lib := range libs[:len(libs)-1] {
				a, b := res[key{g, kind, lib}], res[key{g, kind, ref}]
				var rate, cpu []string
				var cpuR []float64
				var ours cellResult
				for i := range a {
					ours.Cycles += a[i].Cycles
					ours.Seconds += a[i].Seconds
					ours.CPU += a[i].CPU
					ours.Mallocs += a[i].Mallocs
					if i < len(b) {
						ra := float64(a[i].Cycles) / a[i].Seconds / (float64(b[i].Cycles) / b[i].Seconds)
						rc := us(a[i].CPU, a[i].Cycles) / us(b[i].CPU, b[i].Cycles)
						rate = append(rate, fmt.Sprintf("%.2f", ra))
						cpu = append(cpu, fmt.Sprintf("%.2f", rc))
						cpuR = append(cpuR, rc)
					}
				}
				sort.Float64s(cpuR)
				med := 0.0
				if len(cpuR) > 0 {
					med = cpuR[len(cpuR)/2]
				}
				fmt.Printf("| %d | %s | %s | %.0f | %.1f | %.1f | %s | %s | %.2fx |\n", g, kind, lib,
					float64(ours.Cycles)/ours.Seconds, us(ours.CPU, ours.Cycles), float64(ours.Mallocs)/float64(max(ours.Cycles, 1)),
					strings.Join(rate, " / "), strings.Join(cpu, " / "), med)
			}
		}
	}
	return nil
}

func us(d time.Duration, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Nanoseconds()) / 1e3 / float64(n)
}

// runCell runs spec in a child process of this binary.
// A library named "<name>@<path>" is <name> run by the cyclecpu binary at
// <path> (another build of it, for a before/after comparison in one run).
func runCell(self string, spec cellSpec) (cellResult, error) {
	if name, bin, ok := strings.Cut(spec.Lib, "@"); ok {
		spec.Lib, self = name, bin
	}
	raw, _ := json.Marshal(spec)
	cmd := exec.Command(self, "-child", string(raw))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return cellResult{}, fmt.Errorf("cell %s g=%d %s: %w", spec.Lib, spec.Goroutines, spec.Ctx, err)
	}
	var r cellResult
	if err := json.Unmarshal(out, &r); err != nil {
		return cellResult{}, fmt.Errorf("cell %s: %w (%q)", spec.Lib, err, out)
	}
	return r, nil
}

func runChild(raw string) int {
	var spec cellSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "cyclecpu child:", err)
		return 2
	}
	r, err := childCell(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cyclecpu child:", err)
		return 1
	}
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
	return 0
}

// childCell makes spec's library on a client of its own, warms it up and
// measures one cell.
func childCell(spec cellSpec) (cellResult, error) {
	rdb := redis.NewClient(&redis.Options{Addr: spec.Addr, PoolSize: spec.Pool})
	defer rdb.Close()
	if spec.Hook {
		rdb.AddHook(&counter{})
	}
	const ttl = 10 * time.Second
	var cycle func(ctx context.Context, key string) error
	switch spec.Lib {
	case libOurs, libOursDirect:
		b, err := redisbackend.New(rdb, &redisbackend.Options{DisableCoalescing: spec.Lib == libOursDirect})
		if err != nil {
			return cellResult{}, err
		}
		defer b.Close()
		cycle = func(ctx context.Context, key string) error {
			l, err := b.Acquire(ctx, key, ttl)
			if err != nil {
				return err
			}
			return b.Release(ctx, l.ID)
		}
	case libRedislock:
		c := redislock.New(rdb)
		cycle = func(ctx context.Context, key string) error {
			l, err := c.Obtain(ctx, key, ttl, nil)
			if err != nil {
				return err
			}
			return l.Release(ctx)
		}
	case libRedislockBounded:
		c := redislock.New(rdb)
		cycle = func(ctx context.Context, key string) error {
			var l *redislock.Lock
			err := bounded(ctx, func(ctx context.Context) (err error) {
				l, err = c.Obtain(ctx, key, ttl, nil)
				return err
			})
			if err != nil {
				return err
			}
			return bounded(ctx, l.Release)
		}
	case libSpecMin:
		acq, rel := redis.NewScript(specmin.Acquire), redis.NewScript(specmin.Release)
		cycle = specmin.Cycle("spec", ttl,
			func(ctx context.Context, keys []string, id, ttlMs, key string) (any, error) {
				return acq.Run(ctx, rdb, keys, id, ttlMs, key).Result()
			},
			func(ctx context.Context, keys []string, id string) (int64, error) {
				return rel.Run(ctx, rdb, keys, id).Int64()
			})
	default:
		return cellResult{}, fmt.Errorf("unknown library %q", spec.Lib)
	}
	var withCtx func(key string) error
	switch spec.Ctx {
	case "background":
		withCtx = func(key string) error { return cycle(context.Background(), key) }
	case "deadline":
		withCtx = func(key string) error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return cycle(ctx, key)
		}
	default:
		return cellResult{}, fmt.Errorf("unknown context %q", spec.Ctx)
	}
	if spec.Warm > 0 {
		loop(spec, withCtx, spec.Warm, 0, "w")
	}
	if spec.MemProfile != "" {
		runtime.MemProfileRate = 1
	}
	runtime.GC()
	if spec.Profile != "" {
		f, err := os.Create(spec.Profile)
		if err != nil {
			return cellResult{}, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return cellResult{}, err
		}
		defer pprof.StopCPUProfile()
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	r := loop(spec, withCtx, spec.Cell, spec.N, "m")
	r.CPU = cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	r.Mallocs = ms1.Mallocs - ms0.Mallocs
	if spec.MemProfile != "" {
		f, err := os.Create(spec.MemProfile)
		if err != nil {
			return cellResult{}, err
		}
		defer f.Close()
		if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
			return cellResult{}, err
		}
	}
	return r, nil
}

// loop runs spec.Goroutines goroutines, each cycling on a key of its own,
// for d (or n cycles each when n > 0).
func loop(spec cellSpec, cycle func(key string) error, d time.Duration, n int64, phase string) cellResult {
	var cycles, errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	var stop atomic.Bool
	if n == 0 {
		t := time.AfterFunc(d, func() { stop.Store(true) })
		defer t.Stop()
	}
	for i := 0; i < spec.Goroutines; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			key := spec.Tag + phase + ":" + strconv.Itoa(i)
			var lat []time.Duration
			for k := int64(0); n == 0 || k < n; k++ {
				if n == 0 && stop.Load() {
					break
				}
				var t0 time.Time
				if spec.Latency {
					t0 = time.Now()
					if !t0.Before(end) {
						break
					}
				}
				if err := cycle(key); err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				if spec.Latency {
					lat = append(lat, time.Since(t0))
				}
				cycles.Add(1)
			}
			_ = lat
		}(i)
	}
	wg.Wait()
	r := cellResult{Cycles: cycles.Load(), Errors: errs.Load(), Seconds: time.Since(start).Seconds()}
	if e, ok := firstErr.Load().(string); ok {
		r.FirstErr = e
	}
	return r
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// counter is bench/'s round-trip counting hook.
type counter struct{ n atomic.Int64 }

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n.Add(1); return next(ctx, cmds) }
}

// bounded runs f on a goroutine of its own when ctx has a deadline and
// returns its error, or ctx's error when ctx ends first: the least a call
// that must end by its deadline costs on a client that does not apply
// the context's deadline to its socket.
func bounded(ctx context.Context, f func(ctx context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		return f(ctx)
	}
	done := make(chan error, 1)
	go func() { done <- f(context.WithoutCancel(ctx)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
