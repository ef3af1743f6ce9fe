package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

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
	cfg.warm = 20 * time.Millisecond
	cfg.rounds = 1
	cfg.conc = []int{1}
	cfg.allocCycles = 50
	cfg.contenders = 2
	cfg.holds = []time.Duration{0}
	cfg.keepN = 10
	cfg.keepHold = 400 * time.Millisecond
	cfg.keepTTL = 300 * time.Millisecond
	e := &env{srv: srv, cfg: cfg, libs: libraries, log: t.Logf}
	ctx := context.Background()
	res := &results{cfg: cfg, machine: machineInfo(srv)}

	if res.distinct, err = e.runDistinct(ctx); err != nil {
		t.Fatal(err)
	}
	if len(res.distinct) != len(libraries) {
		t.Fatalf("distinct: %d results, want %d", len(res.distinct), len(libraries))
	}
	for _, d := range res.distinct {
		if d.Cycles == 0 || d.Errors != 0 || d.P50 <= 0 {
			t.Errorf("distinct %s: %+v", d.Lib, d)
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
	if res.hot, err = e.runHot(ctx); err != nil {
		t.Fatal(err)
	}
	if len(res.hot) != len(libraries)-1 {
		t.Fatalf("hot: %d results, want %d", len(res.hot), len(libraries)-1)
	}
	for _, h := range res.hot {
		if h.Successes == 0 || h.Commands == 0 || h.RoundTrips == 0 {
			t.Errorf("hot %s: %+v", h.Lib, h)
		}
	}
	if res.keep, err = e.runKeep(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range res.keep {
		if k.RoundTrips == 0 || k.Commands == 0 {
			t.Errorf("keep %s: %+v", k.Lib, k)
		}
	}

	dir := t.TempDir()
	charts, err := writeCharts(res, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 3 {
		t.Errorf("charts: %v", charts)
	}
	for _, c := range charts {
		if fi, err := os.Stat(filepath.Join(dir, c)); err != nil || fi.Size() == 0 {
			t.Errorf("chart %s: %v", c, err)
		}
	}
	if md := res.markdown(); len(md) < 500 {
		t.Errorf("report too short:\n%s", md)
	}
}
