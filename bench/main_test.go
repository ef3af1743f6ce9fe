package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the fleet and fan-out workers, as
// the bench binary does: the parent re-executes os.Executable().
func TestMain(m *testing.M) {
	if isWorker(os.Args[1:]) {
		os.Exit(workerMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func TestJain(t *testing.T) {
	for _, c := range []struct {
		xs   []int64
		want float64
	}{
		{[]int64{5, 5, 5, 5}, 1},
		{[]int64{8, 0, 0, 0}, 0.25},
		{[]int64{1, 3}, 16.0 / 20},
		{[]int64{0, 0}, 0},
	} {
		if got := jain(c.xs); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("jain(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

func TestStarved(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		grants []int64
		dur    time.Duration
		want   bool
	}{
		{nil, 4 * time.Second, true},
		{[]int64{500 * ms, 1400 * ms, 2300 * ms, 3200 * ms}, 4 * time.Second, false},
		{[]int64{500 * ms, 1600 * ms}, 2 * time.Second, true},  // gap in the middle
		{[]int64{1000 * ms, 1500 * ms}, 2 * time.Second, true}, // gap at the start
		{[]int64{500 * ms, 900 * ms}, 2 * time.Second, true},   // gap at the end
		{[]int64{100 * ms}, 500 * time.Millisecond, false},     // window too short to tell
		{[]int64{999 * ms, 1998 * ms}, 2 * time.Second, false},
	} {
		if got := starved(c.grants, c.dur); got != c.want {
			t.Errorf("starved(%v, %v) = %v, want %v", c.grants, c.dur, got, c.want)
		}
	}
}

// TestSmoke runs every workload briefly (about 100 ms per cell, one
// goroutine) against a private redis-server and checks that every library
// produced nonzero figures, then renders the report and the charts.
func TestSmoke(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("SYNCGUARD_REQUIRE_REDIS") == "1" {
			t.Fatal("redis-server not on PATH")
		}
		t.Skip("redis-server not on PATH")
	}
	srv, err := startServer("redis-server")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	cfg := defaultConfig()
	cfg.cell = 100 * time.Millisecond
	cfg.warm = 0 // a warm-up cut short by its deadline can leave a rueidislock key held until it expires
	cfg.rounds = 1
	cfg.conc = []int{1}
	cfg.allocCycles = 50
	cfg.contenders = 2
	cfg.holds = []time.Duration{0}
	cfg.handoffCell = 100 * time.Millisecond
	cfg.fleetProcs = 2
	cfg.fleetG = 2
	cfg.fleetCell = 300 * time.Millisecond
	cfg.fanoutIdle = []int{0, 2}
	cfg.fanoutG = 2
	cfg.keepN = 10
	cfg.keepHold = 400 * time.Millisecond
	cfg.keepTTL = 300 * time.Millisecond
	cfg.limitG = 2
	e := &env{srv: srv, cfg: cfg, libs: libraries, log: t.Logf}
	ctx := context.Background()
	res := &results{cfg: cfg, machine: machineInfo(srv)}

	if res.distinct, err = e.runDistinct(ctx); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, l := range libraries {
		for _, k := range cfg.kinds {
			if l.runsWith(k) {
				want++
			}
		}
	}
	if len(res.distinct) != want {
		t.Fatalf("distinct: %d results, want %d", len(res.distinct), want)
	}
	for _, d := range res.distinct {
		if d.Cycles == 0 || d.Errors != 0 || d.P50 <= 0 || d.Redis.Calls == 0 || d.Redis.Usec == 0 {
			t.Errorf("distinct %s %s: %+v", d.Lib, d.Ctx, d)
		}
	}
	if res.allocs, err = e.runAllocs(ctx); err != nil {
		t.Fatal(err)
	}
	for _, a := range res.allocs {
		if a.PerCycle <= 0 || a.ErrCycles != 0 {
			t.Errorf("allocs %s: %+v", a.Lib, a)
		}
	}
	if res.fleet, err = e.runFleet(ctx); err != nil {
		t.Fatal(err)
	}
	if want := hotLibraries(); len(res.fleet) != want {
		t.Fatalf("fleet: %d results, want %d", len(res.fleet), want)
	}
	for _, f := range res.fleet {
		if f.Grants == 0 || f.Commands == 0 || f.WorkerCount != 4 || f.Jain <= 0 || f.MaxWait <= 0 {
			t.Errorf("fleet %s: %+v", f.Lib, f)
		}
	}
	if res.fanout, err = e.runFanout(ctx); err != nil {
		t.Fatal(err)
	}
	if want := 2 * hotLibraries(); len(res.fanout) != want {
		t.Fatalf("fan-out: %d results, want %d", len(res.fanout), want)
	}
	for _, f := range res.fanout {
		if f.Cycles == 0 || f.Errors != 0 {
			t.Errorf("fan-out %s idle %d: %+v", f.Lib, f.Idle, f)
		}
	}
	if res.hot, err = e.runHot(ctx); err != nil {
		t.Fatal(err)
	}
	if want := hotLibraries(); len(res.hot) != want {
		t.Fatalf("hot: %d results, want %d", len(res.hot), want)
	}
	for _, h := range res.hot {
		if h.Successes == 0 || h.Commands == 0 || (h.RoundTrips == 0) != (h.Lib == libRueidis) {
			t.Errorf("hot %s: %+v", h.Lib, h)
		}
	}
	if res.keep, err = e.runKeep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range res.keep {
		if (k.RoundTrips == 0) != (k.Lib == libRueidis) || k.Commands == 0 {
			t.Errorf("keep %s: %+v", k.Lib, k)
		}
	}
	if res.limit, err = e.runLimit(ctx); err != nil {
		t.Fatal(err)
	}
	if len(res.limit.distinct) != 2 || len(res.limit.fleet) != 2 {
		t.Fatalf("limit: %d cycle and %d hot results, want 2 and 2 (lock and limit)", len(res.limit.distinct), len(res.limit.fleet))
	}
	for _, d := range res.limit.distinct {
		if d.Cycles == 0 || d.Errors != 0 {
			t.Errorf("limit cycles %s: %+v", d.Lib, d)
		}
	}
	for _, f := range res.limit.fleet {
		if f.Grants == 0 || f.WorkerCount != 4 || f.Jain <= 0 {
			t.Errorf("limit hot %s: %+v", f.Lib, f)
		}
	}
	if res.rw, err = e.runRW(ctx); err != nil {
		t.Fatal(err)
	}
	if len(res.rw) != 2 || res.rw[1].Lib != libSyncguardRW {
		t.Fatalf("rwlock: %+v, want the lock's and the writers' results", res.rw)
	}
	for _, f := range res.rw {
		if f.Grants == 0 || f.WorkerCount != 4 || f.Jain <= 0 {
			t.Errorf("rwlock hot %s: %+v", f.Lib, f)
		}
	}

	dir := t.TempDir()
	charts, err := writeCharts(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 5 {
		t.Errorf("charts: %v", charts)
	}
	for _, c := range charts {
		if fi, err := os.Stat(filepath.Join(dir, c)); err != nil || fi.Size() == 0 {
			t.Errorf("chart %s: %v", c, err)
		}
	}
	md := res.markdown()
	if len(md) < 500 {
		t.Errorf("report too short:\n%s", md)
	}
	for _, want := range []string{"## 6. Concurrency limits", "## 7. Read-write locks across processes", "## Goals of issue 25", libSpecMin, "5 s deadline"} {
		if !strings.Contains(md, want) {
			t.Errorf("report has no %q", want)
		}
	}
	if !strings.Contains(md, "## 6. Concurrency limits") {
		t.Errorf("report has no limit section:\n%s", md)
	}
}

// hotLibraries counts the libraries of the hot-key and keep-alive workloads.
func hotLibraries() int {
	n := 0
	for _, l := range libraries {
		if !l.distinctOnly {
			n++
		}
	}
	return n
}

func TestParseKinds(t *testing.T) {
	ks, err := parseKinds("deadline, background,deadline")
	if err != nil || len(ks) != 2 || ks[0] != ctxDeadline || ks[1] != ctxBackground {
		t.Errorf("parseKinds = %v, %v", ks, err)
	}
	if _, err := parseKinds("request"); err == nil {
		t.Error("parseKinds(request): no error")
	}
}
