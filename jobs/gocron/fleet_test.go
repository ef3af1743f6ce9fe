package gocronlock_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/lock"
	"github.com/syncguard-go/syncguard/testkit/redistest"
)

// fleetRun is one run of the job, as a member printed it.
type fleetRun struct {
	member string
	at     time.Time // by the member's clock: its scheduled time, give or take
	fence  lock.Fence
	wall   time.Time // by the machine's clock
}

// scenario is what a fleet runs: the members' mode and job, their clock
// offsets (a member started after a fault takes the offset of the one it
// replaces), the window and lease TTL.
type scenario struct {
	mode, job string
	offsets   []time.Duration
	window    time.Duration
	ttl       time.Duration
}

// fleet is a test's member processes on one server.
type fleet struct {
	t      testing.TB
	sc     scenario
	addr   string
	prefix string

	mu     sync.Mutex
	runs   []fleetRun
	procs  map[string]*exec.Cmd
	offset map[string]time.Duration
	n      int
	wg     sync.WaitGroup
}

func newFleet(t testing.TB, sc scenario) *fleet {
	f := &fleet{t: t, sc: sc, addr: redistest.Shared(t).Addr(), prefix: strings.TrimSuffix(redistest.Prefix(t), ":"),
		procs: map[string]*exec.Cmd{}, offset: map[string]time.Duration{}}
	for _, off := range sc.offsets {
		f.start(off)
	}
	return f
}

// start starts one more member with the clock offset off.
func (f *fleet) start(off time.Duration) {
	f.t.Helper()
	f.mu.Lock()
	f.n++
	name := "member-" + itoa(f.n)
	f.mu.Unlock()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), fleetAddrEnv+"="+f.addr, fleetPrefixEnv+"="+f.prefix, fleetNameEnv+"="+name,
		fleetModeEnv+"="+f.sc.mode, fleetJobEnv+"="+f.sc.job, fleetOffsetEnv+"="+off.String(),
		fleetWindowEnv+"="+f.sc.window.String(), fleetTTLEnv+"="+f.sc.ttl.String())
	c.Stderr = os.Stderr
	out, err := c.StdoutPipe()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = c.Process.Kill() })
	f.mu.Lock()
	f.procs[name], f.offset[name] = c, off
	f.mu.Unlock()
	f.wg.Go(func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f.line(name, sc.Text())
		}
		_ = c.Wait()
	})
}

// line records a member's line.
func (f *fleet) line(name, line string) {
	var at, wall int64
	var fence string
	if _, err := fmt.Sscanf(line, "run %d %s %d", &at, &fence, &wall); err != nil {
		f.t.Errorf("%s: %s", name, line)
		return
	}
	if fence == "-" {
		fence = ""
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs = append(f.runs, fleetRun{name, time.UnixMilli(at), lock.Fence(fence), time.Unix(0, wall)})
}

// last returns the latest run.
func (f *fleet) last() fleetRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	var r fleetRun
	for _, x := range f.runs {
		if x.wall.After(r.wall) {
			r = x
		}
	}
	return r
}

// waitRun waits for a run after t by a member other than not.
func (f *fleet) waitRun(after time.Time, not string, timeout time.Duration) fleetRun {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if r := f.last(); r.wall.After(after) && r.member != not {
			return r
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("no run after %v by a member other than %q within %v", after.Format(time.StampMilli), not, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// signal sends sig to the member of the latest run (see signalMember),
// and returns the member and when it was signalled.
func (f *fleet) signal(sig syscall.Signal) (string, time.Time) {
	f.t.Helper()
	r := f.last()
	f.t.Logf("%v: %s (fence %s)", sig, r.member, r.fence)
	return r.member, f.signalMember(r.member, sig)
}

// signalMember sends sig to the member name, starts a member with its
// offset in its place, and returns when it was signalled.
func (f *fleet) signalMember(name string, sig syscall.Signal) time.Time {
	f.t.Helper()
	f.mu.Lock()
	c, off := f.procs[name], f.offset[name]
	delete(f.procs, name)
	f.mu.Unlock()
	if c == nil {
		f.t.Fatalf("no member %q", name)
	}
	at := time.Now()
	_ = c.Process.Signal(sig)
	f.start(off)
	return at
}

// sortedByWall returns runs by the machine's clock.
func sortedByWall(runs []fleetRun) []fleetRun {
	out := slices.Clone(runs)
	slices.SortFunc(out, func(a, b fleetRun) int { return a.wall.Compare(b.wall) })
	return out
}

// stop stops every member (SIGTERM) and waits for their output.
func (f *fleet) stop() {
	f.mu.Lock()
	for _, c := range f.procs {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	f.mu.Unlock()
	f.wg.Wait()
}
