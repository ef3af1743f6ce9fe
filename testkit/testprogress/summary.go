package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (see go doc test2json), including
// the build events of Go 1.24+.
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64 // seconds
	Output      string
	ImportPath  string // build-output, build-fail
	FailedBuild string // on a package's fail: the import path whose build failed
}

// outputLine is a line of output and the test that printed it ("" for the
// package itself).
type outputLine struct{ test, text string }

// pkgState is what is known of a package still running.
type pkgState struct {
	started time.Time
	output  []outputLine
	failed  map[string]bool // tests that failed
}

// testTime is a finished top-level test and how long it took.
type testTime struct {
	pkg, test string
	elapsed   float64
}

// summary turns go test's events into one line per package, the output of
// failed tests, and a final summary: the slowest tests, the skipped tests by
// reason, and the counts of packages and of tests (subtests included). It is
// safe for concurrent use.
type summary struct {
	mu       sync.Mutex
	w        io.Writer
	module   string // trimmed from package names
	pkgs     map[string]*pkgState
	build    map[string][]string // build output per import path
	tests    []testTime
	lastLine time.Time      // of the last package line
	counts   map[string]int // packages by action: pass, fail, skip (no tests)
	results  map[string]int // tests and subtests by action: pass, fail, skip
	skips    skipReasons
	failed   bool
}

func newSummary(w io.Writer, module string) *summary {
	return &summary{
		w: w, module: module,
		pkgs: map[string]*pkgState{}, build: map[string][]string{}, counts: map[string]int{},
		results: map[string]int{}, lastLine: time.Now(),
	}
}

// name returns pkg relative to the module: "lock", "." for the root.
func (s *summary) name(pkg string) string {
	if s.module == "" {
		return pkg
	}
	if pkg == s.module {
		return "."
	}
	if rest, ok := strings.CutPrefix(pkg, s.module+"/"); ok {
		return rest
	}
	return pkg
}

func (s *summary) pkg(name string) *pkgState {
	p := s.pkgs[name]
	if p == nil {
		p = &pkgState{started: time.Now(), failed: map[string]bool{}}
		s.pkgs[name] = p
	}
	return p
}

// line handles one line of go test's standard output.
func (s *summary) line(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var e event
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &e) != nil {
		fmt.Fprintf(s.w, "%s\n", b) // not an event: pass it on
		return
	}
	switch e.Action {
	case "build-output":
		s.build[e.ImportPath] = append(s.build[e.ImportPath], e.Output)
		return
	case "build-fail":
		s.failed = true
		return
	}
	if e.Package == "" {
		return
	}
	p := s.pkg(e.Package)
	switch {
	case e.Action == "output":
		p.output = append(p.output, outputLine{e.Test, e.Output})
	case e.Test != "" && e.Action == "skip":
		s.results["skip"]++
		s.skips.add(s.name(e.Package), e.Test, p.output)
	case e.Test != "" && e.Action == "fail":
		p.failed[e.Test] = true
		fallthrough
	case e.Test != "" && e.Action == "pass":
		s.results[e.Action]++
		if !strings.Contains(e.Test, "/") {
			s.tests = append(s.tests, testTime{e.Package, e.Test, e.Elapsed})
		}
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		s.done(e, p)
	}
}

// done prints the line of a finished package, and for a failed one the
// output of its failed tests (or of its build).
func (s *summary) done(e event, p *pkgState) {
	delete(s.pkgs, e.Package)
	s.lastLine = time.Now()
	status := map[string]string{"pass": "ok", "fail": "FAIL", "skip": "-"}[e.Action]
	note := ""
	if e.Action == "skip" {
		note = "  (no tests)"
		for _, l := range p.output {
			if strings.Contains(l.text, "[no test files]") {
				note = "  (no test files)"
			}
		}
	}
	s.counts[e.Action]++
	if e.Action == "skip" {
		fmt.Fprintf(s.w, "%-4s  %s%s\n", status, s.name(e.Package), note)
		return
	}
	fmt.Fprintf(s.w, "%-4s  %-44s %6.1fs\n", status, s.name(e.Package), e.Elapsed)
	if e.Action != "fail" {
		return
	}
	s.failed = true
	if e.FailedBuild != "" {
		for _, l := range s.build[e.FailedBuild] {
			io.WriteString(s.w, "      "+l)
		}
		delete(s.build, e.FailedBuild)
	}
	for _, l := range p.output {
		if l.test == "" || p.failed[l.test] {
			io.WriteString(s.w, "      "+l.text)
		}
	}
}

// heartbeat prints which packages are still running when no package line
// came for idle, until done is closed.
func (s *summary) heartbeat(idle time.Duration, start time.Time, done <-chan struct{}) {
	t := time.NewTicker(idle / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			s.mu.Lock()
			if now.Sub(s.lastLine) >= idle {
				s.lastLine = now
				var running []string
				for name, p := range s.pkgs {
					running = append(running, fmt.Sprintf("%s (%v)", s.name(name), now.Sub(p.started).Round(time.Second)))
				}
				slices.Sort(running)
				msg := "building"
				if len(running) > 0 {
					msg = "running " + strings.Join(running, ", ")
				}
				fmt.Fprintf(s.w, "  ... %v: %s\n", now.Sub(start).Round(time.Second), msg)
			}
			s.mu.Unlock()
		}
	}
}

// finish prints what is left (build output no package claimed), the slowest
// tests and the totals, and reports whether anything failed.
func (s *summary) finish(wall time.Duration, slowest int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lines := range s.build {
		s.failed = true
		for _, l := range lines {
			io.WriteString(s.w, l)
		}
	}
	if slowest > 0 && len(s.tests) > 0 {
		slices.SortFunc(s.tests, func(a, b testTime) int {
			switch {
			case a.elapsed > b.elapsed:
				return -1
			case a.elapsed < b.elapsed:
				return 1
			}
			return 0
		})
		fmt.Fprintf(s.w, "slowest tests:\n")
		for _, t := range s.tests[:min(slowest, len(s.tests))] {
			fmt.Fprintf(s.w, "  %6.1fs  %s %s\n", t.elapsed, s.name(t.pkg), t.test)
		}
	}
	s.skips.print(s.w)
	result := "PASS"
	if s.failed {
		result = "FAIL"
	}
	fmt.Fprintf(s.w, "%s: %d packages ok, %d failed, %d without tests; %d tests passed, %d failed, %d skipped; in %v\n",
		result, s.counts["pass"], s.counts["fail"], s.counts["skip"],
		s.results["pass"], s.results["fail"], s.results["skip"], wall.Round(100*time.Millisecond))
	return s.failed
}
