package main

// Fleet workloads: several OS processes against the one redis-server, as a
// service's instances are. The bench binary re-executes itself as its
// workers (`bench -worker fleet|idle ...`, see workerMain); the parent
// coordinates them over their stdin/stdout:
//
//   - hot key across processes (runFleet): P processes x G goroutines loop
//     wait-acquire, hold, release on one key, with no handoff rule (a
//     releaser may want the lock again at once). Each process reports the
//     grant times and waits of its goroutines; the parent samples INFO
//     commandstats and INFO cpu around the measured window.
//   - fan-out (runFanout): the distinct-keys cycle with 32 goroutines in
//     the parent while N idle processes of the same library sit next to
//     it, each having waited for a lock once (so a library that subscribes
//     to release notifications is subscribed).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// workerFlag is the first argument that turns the binary into a worker.
const workerFlag = "-worker"

// isWorker reports whether args (without the program name) ask for a worker.
func isWorker(args []string) bool { return len(args) > 0 && args[0] == workerFlag }

// workerMain runs a worker (args without the program name, starting with
// -worker) and returns the exit code.
func workerMain(args []string) int {
	if err := runWorker(args); err != nil {
		fmt.Fprintln(os.Stderr, "bench worker:", err)
		return 1
	}
	return 0
}

// fleetReport is what a fleet worker prints (JSON, one line) when done.
// Times are nanoseconds since the start of the measured window.
type fleetReport struct {
	Grants  [][]int64 `json:"grants"`  // per goroutine: acquire returns inside the window
	Waits   []int64   `json:"waits"`   // first acquire call -> grant (across calls that gave up), for the grants inside the window
	Pending []int64   `json:"pending"` // waits still under way at the end of the window (their length so far)
	Failed  int64     `json:"failed"`  // acquire calls that gave up inside the window
}

func runWorker(args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	mode := fs.String("worker", "", "fleet or idle")
	addr := fs.String("addr", "", "redis address")
	libName := fs.String("lib", "", "library")
	key := fs.String("key", "", "lock key")
	hold := fs.Duration("hold", 0, "hold per acquisition (fleet)")
	g := fs.Int("g", 4, "goroutines (fleet)")
	ttl := fs.Duration("ttl", 10*time.Second, "lease TTL")
	pool := fs.Int("pool", 0, "go-redis PoolSize (0: its default)")
	warm := fs.Duration("warm", 0, "warm-up before the measured window (fleet)")
	dur := fs.Duration("dur", time.Second, "measured window (fleet)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	lib, ok := findLibrary(*libName)
	if !ok {
		return fmt.Errorf("unknown library %q", *libName)
	}
	rdb := redis.NewClient(&redis.Options{Addr: *addr, PoolSize: *pool})
	defer rdb.Close()
	im, err := lib.make(rdb, *ttl)
	if err != nil {
		return err
	}
	if im.close != nil {
		defer func() { _ = im.close() }()
	}
	if im.hot == nil {
		return fmt.Errorf("%s has no waiting acquire", *libName)
	}
	ctx := context.Background()
	in := bufio.NewScanner(os.Stdin)
	switch *mode {
	case "idle":
		// a key of each process's own: the point is a client that has
		// waited, not contention between the idle processes
		if err := waitOnce(ctx, im, *key+":"+strconv.Itoa(os.Getpid())); err != nil {
			return err
		}
		fmt.Println("ready")
		for in.Scan() { // idle until the parent closes stdin
		}
		return nil
	case "fleet":
		if err := rdb.Ping(ctx).Err(); err != nil {
			return err
		}
		fmt.Println("ready")
		if !in.Scan() {
			return errors.New("no start time on stdin")
		}
		t0, err := strconv.ParseInt(strings.TrimSpace(in.Text()), 10, 64)
		if err != nil {
			return err
		}
		rep := fleetWorker(ctx, im, *key, *g, *hold, time.Unix(0, t0), *warm, *dur)
		return json.NewEncoder(os.Stdout).Encode(rep)
	}
	return fmt.Errorf("unknown worker mode %q", *mode)
}

// waitOnce makes im wait for key once: one goroutine takes it, another
// asks for it with the library's waiting acquire, the first releases
// after 100 ms and the second gets it. A waiter that has not got the lock
// 3 s after the release still counts as having waited (rueidislock can miss
// its wake-up on a loaded machine: a retry cut short by its 20 ms
// TryNextAfter waits for an invalidation that no longer comes).
func waitOnce(ctx context.Context, im *impl, key string) error {
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rel, err := im.hot(actx, key)
	if err != nil {
		return err
	}
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	got := make(chan error, 1)
	go func() {
		rel2, err := im.hot(wctx, key)
		if err == nil {
			err = rel2(ctx)
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := rel(ctx); err != nil {
		return err
	}
	select {
	case err := <-got:
		return err
	case <-time.After(3 * time.Second):
		wcancel()
		if err := <-got; err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
		return nil
	}
}

// fleetWorker runs g goroutines from t0 to t0+warm+dur and reports the
// window [t0+warm, t0+warm+dur).
func fleetWorker(ctx context.Context, im *impl, key string, g int, hold time.Duration, t0 time.Time, warm, dur time.Duration) fleetReport {
	time.Sleep(time.Until(t0))
	wStart := t0.Add(warm)
	wEnd := wStart.Add(dur)
	cctx, cancel := context.WithDeadline(ctx, wEnd)
	defer cancel()
	rep := fleetReport{Grants: make([][]int64, g)}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var grants, waits []int64
			var failed int64
			pending := int64(-1)
			var call time.Time // when this wait began: its first acquire call
			for cctx.Err() == nil {
				if call.IsZero() {
					call = time.Now()
				}
				release, err := im.hot(cctx, key)
				now := time.Now()
				if err != nil {
					if cctx.Err() == nil && !now.Before(wStart) {
						failed++ // gave up: the wait goes on with the next call
					}
					continue
				}
				if !now.Before(wEnd) && call.Before(wEnd) {
					pending = int64(wEnd.Sub(call)) // granted after the window: still waiting at its end
				} else if !now.Before(wStart) {
					grants = append(grants, int64(now.Sub(wStart)))
					waits = append(waits, int64(now.Sub(call)))
				}
				call = time.Time{}
				if hold > 0 {
					time.Sleep(hold)
				}
				rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = release(rctx)
				rcancel()
			}
			if !call.IsZero() && call.Before(wEnd) {
				pending = int64(wEnd.Sub(call)) // still waiting at the end
			}
			mu.Lock()
			rep.Grants[i] = grants
			rep.Waits = append(rep.Waits, waits...)
			if pending >= 0 {
				rep.Pending = append(rep.Pending, pending)
			}
			rep.Failed += failed
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	return rep
}

// worker is a running child process.
type worker struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startWorkers starts n workers with args and waits until each has said
// "ready".
func startWorkers(n int, args []string) ([]*worker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var ws []*worker
	fail := func(err error) ([]*worker, error) {
		stopWorkers(ws)
		return nil, err
	}
	for i := 0; i < n; i++ {
		cmd := exec.Command(exe, append([]string{workerFlag}, args...)...)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return fail(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return fail(err)
		}
		if err := cmd.Start(); err != nil {
			return fail(err)
		}
		ws = append(ws, &worker{cmd: cmd, stdin: stdin, out: bufio.NewReaderSize(stdout, 1<<20)})
	}
	for _, w := range ws {
		line, err := w.out.ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			return fail(fmt.Errorf("worker %v: %q, %v", args, line, err))
		}
	}
	return ws, nil
}

// stopWorkers closes their stdin and waits for them (killing any still
// running after 10 s).
func stopWorkers(ws []*worker) {
	for _, w := range ws {
		_ = w.stdin.Close()
	}
	for _, w := range ws {
		done := make(chan struct{})
		go func() { _ = w.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = w.cmd.Process.Kill()
			<-done
		}
	}
}

// ---------- hot key across processes ----------

type fleetResult struct {
	Lib         string
	Hold        time.Duration
	Procs, G    int
	Seconds     float64
	Grants      int64
	Failed      int64
	Jain        float64
	MaxWait     time.Duration // includes waits still pending at the end
	P99Wait     time.Duration
	Starved     int     // workers with a 1 s window of zero grants
	Commands    int64   // INFO commandstats calls delta
	RedisCPU    float64 // INFO cpu used_cpu_sys+used_cpu_user delta, seconds
	PerWorker   []int64 // grants per worker
	WorkerCount int
}

func (r fleetResult) Rate() float64 { return float64(r.Grants) / r.Seconds }
func (r fleetResult) CmdsPerAcq() float64 {
	if r.Grants == 0 {
		return 0
	}
	return float64(r.Commands) / float64(r.Grants)
}

// CPUPerAcq is Redis CPU per acquisition in microseconds.
func (r fleetResult) CPUPerAcq() float64 {
	if r.Grants == 0 {
		return 0
	}
	return r.RedisCPU * 1e6 / float64(r.Grants)
}

// jain is Jain's fairness index of xs: (sum x)^2 / (n sum x^2); 1 when
// all are equal, 1/n when one worker gets everything.
func jain(xs []int64) float64 {
	var s, s2 float64
	for _, x := range xs {
		s += float64(x)
		s2 += float64(x) * float64(x)
	}
	if s2 == 0 {
		return 0
	}
	return s * s / (float64(len(xs)) * s2)
}

// starved reports whether grants (sorted, ns since the window start) leave
// a gap of at least 1 s inside a window of length dur, edges included.
func starved(grants []int64, dur time.Duration) bool {
	if dur < time.Second {
		return false
	}
	prev := int64(0)
	for _, t := range grants {
		if t-prev >= int64(time.Second) {
			return true
		}
		prev = t
	}
	return int64(dur)-prev >= int64(time.Second)
}

// redisCPU returns used_cpu_sys + used_cpu_user from INFO cpu, seconds.
func redisCPU(ctx context.Context, c *redis.Client) (float64, error) {
	info, err := c.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	sys, _ := strconv.ParseFloat(infoField(info, "used_cpu_sys"), 64)
	user, _ := strconv.ParseFloat(infoField(info, "used_cpu_user"), 64)
	return sys + user, nil
}

func (e *env) waitingLibs() []library {
	var out []library
	for _, l := range e.libs {
		if !l.distinctOnly {
			out = append(out, l)
		}
	}
	return out
}

func (e *env) runFleet(ctx context.Context) ([]fleetResult, error) {
	admin, _ := e.srv.newClient(2)
	defer admin.Close()
	var out []fleetResult
	for hi, hold := range e.cfg.holds {
		for _, l := range rotate(e.waitingLibs(), hi) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r, err := e.fleetCell(ctx, admin, l, hold)
			if err != nil {
				return nil, fmt.Errorf("fleet %s hold %v: %w", l.name, hold, err)
			}
			e.log("fleet hold=%-4v %-14s %8.1f acq/s  Jain %.3f  wait max %-10v p99 %-10v starved %2d/%d  %5.1f cmds/acq  %6.1f µs Redis CPU/acq  gave-up %d",
				hold, l.name, r.Rate(), r.Jain, r.MaxWait.Round(time.Microsecond), r.P99Wait.Round(time.Microsecond),
				r.Starved, r.WorkerCount, r.CmdsPerAcq(), r.CPUPerAcq(), r.Failed)
			out = append(out, r)
		}
	}
	// report order: by hold, then library order
	slices.SortStableFunc(out, func(a, b fleetResult) int {
		if a.Hold != b.Hold {
			return int(a.Hold - b.Hold)
		}
		return libIndex(a.Lib) - libIndex(b.Lib)
	})
	return out, nil
}

func libIndex(name string) int {
	for i, l := range libraries {
		if l.name == name {
			return i
		}
	}
	return len(libraries)
}

func (e *env) fleetCell(ctx context.Context, admin *redis.Client, l library, hold time.Duration) (fleetResult, error) {
	c := e.cfg
	key := "fleet" + strconv.FormatInt(keySeq.Add(1), 10)
	args := []string{"fleet", "-addr", e.srv.Addr(), "-lib", l.name, "-key", key, "-hold", hold.String(),
		"-g", strconv.Itoa(c.fleetG), "-ttl", c.ttl.String(), "-pool", strconv.Itoa(c.poolSize),
		"-warm", c.warm.String(), "-dur", c.fleetCell.String()}
	ws, err := startWorkers(c.fleetProcs, args)
	if err != nil {
		return fleetResult{}, err
	}
	defer stopWorkers(ws)
	t0 := time.Now().Add(50 * time.Millisecond)
	for _, w := range ws {
		if _, err := fmt.Fprintf(w.stdin, "%d\n", t0.UnixNano()); err != nil {
			return fleetResult{}, err
		}
	}
	wStart := t0.Add(c.warm)
	time.Sleep(time.Until(wStart))
	c0, err1 := commandCalls(ctx, admin)
	cpu0, err2 := redisCPU(ctx, admin)
	time.Sleep(time.Until(wStart.Add(c.fleetCell)))
	c1, err3 := commandCalls(ctx, admin)
	cpu1, err4 := redisCPU(ctx, admin)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return fleetResult{}, err
	}
	r := fleetResult{Lib: l.name, Hold: hold, Procs: c.fleetProcs, G: c.fleetG, Seconds: c.fleetCell.Seconds(),
		Commands: c1 - c0, RedisCPU: cpu1 - cpu0}
	var waits []int64
	for _, w := range ws {
		var rep fleetReport
		if err := json.NewDecoder(w.out).Decode(&rep); err != nil {
			return fleetResult{}, fmt.Errorf("worker report: %w", err)
		}
		for _, gs := range rep.Grants {
			slices.Sort(gs)
			r.PerWorker = append(r.PerWorker, int64(len(gs)))
			r.Grants += int64(len(gs))
			if starved(gs, c.fleetCell) {
				r.Starved++
			}
		}
		waits = append(waits, rep.Waits...)
		waits = append(waits, rep.Pending...)
		for _, p := range rep.Pending {
			r.MaxWait = max(r.MaxWait, time.Duration(p))
		}
		r.Failed += rep.Failed
	}
	r.WorkerCount = len(r.PerWorker)
	r.Jain = jain(r.PerWorker)
	slices.Sort(waits)
	if len(waits) > 0 {
		r.MaxWait = max(r.MaxWait, time.Duration(waits[len(waits)-1]))
		ds := make([]time.Duration, len(waits))
		for i, w := range waits {
			ds[i] = time.Duration(w)
		}
		r.P99Wait = percentile(ds, 0.99)
	}
	return r, nil
}

// ---------- fan-out: distinct keys next to idle instances ----------

type fanoutResult struct {
	Lib        string
	Idle       int
	Goroutines int
	Cycles     int64
	Errors     int64
	Seconds    float64
}

func (r fanoutResult) Rate() float64 { return float64(r.Cycles) / r.Seconds }

// runFanout measures each library with its idle instances grown (even
// rounds) or shrunk (odd rounds) through c.fanoutIdle, so that drift in the
// machine's load does not always favour the same count; the library order
// rotates every round.
func (e *env) runFanout(ctx context.Context) ([]fanoutResult, error) {
	c := e.cfg
	acc := map[[2]any]*fanoutResult{}
	libs := e.waitingLibs()
	counts := slices.Clone(c.fanoutIdle)
	slices.Sort(counts)
	for round := 0; round < c.rounds; round++ {
		order := slices.Clone(counts)
		if round%2 == 1 {
			slices.Reverse(order)
		}
		for _, l := range rotate(libs, round) {
			var ws []*worker
			for _, idle := range order {
				if err := ctx.Err(); err != nil {
					stopWorkers(ws)
					return nil, err
				}
				if idle < len(ws) {
					stopWorkers(ws[idle:])
					ws = ws[:idle]
				} else if idle > len(ws) {
					more, err := startWorkers(idle-len(ws), []string{"idle", "-addr", e.srv.Addr(), "-lib", l.name,
						"-key", "idle" + strconv.FormatInt(keySeq.Add(1), 10), "-ttl", c.ttl.String(), "-pool", "4"})
					if err != nil {
						stopWorkers(ws)
						return nil, fmt.Errorf("fan-out %s idle %d: %w", l.name, idle, err)
					}
					ws = append(ws, more...)
				}
				inst, err := e.instance(l, c.ttl)
				if err != nil {
					stopWorkers(ws)
					return nil, err
				}
				tag := "f" + strconv.FormatInt(keySeq.Add(1), 10) + ":"
				if c.warm > 0 {
					distinctCell(ctx, inst, c.fanoutG, ctxBackground, c.warm, tag)
				}
				r, _ := distinctCell(ctx, inst, c.fanoutG, ctxBackground, c.cell/time.Duration(c.rounds), tag)
				_ = inst.close()
				k := [2]any{l.name, idle}
				a := acc[k]
				if a == nil {
					a = &fanoutResult{Lib: l.name, Idle: idle, Goroutines: c.fanoutG}
					acc[k] = a
				}
				a.Cycles += r.Cycles
				a.Errors += r.Errors
				a.Seconds += r.Seconds
			}
			stopWorkers(ws)
		}
	}
	var out []fanoutResult
	for _, idle := range c.fanoutIdle {
		for _, l := range libs {
			a := acc[[2]any{l.name, idle}]
			base := acc[[2]any{l.name, c.fanoutIdle[0]}]
			e.log("fan-out idle=%-2d %-14s %9.0f cycles/s (%.2fx of %d idle) errors %d",
				idle, l.name, a.Rate(), a.Rate()/base.Rate(), c.fanoutIdle[0], a.Errors)
			out = append(out, *a)
		}
	}
	return out, nil
}
