// Command testprogress runs `go test -json` and prints one line per package
// as each finishes (status, name, seconds), the full output of every test
// that failed, and a summary: the slowest tests, the skipped tests grouped
// by the reason they gave, and the packages and tests (subtests included)
// that passed, failed and skipped. `make test` uses it so that a run of
// several minutes shows its progress, and a run where tests skipped says so.
//
//	go run ./testkit/testprogress [-slowest N] [-json FILE] [-go GO] [-idle D] [go test flags] [packages]
//
// Its own flags come first; everything from the first other argument on goes to `go test -json` unchanged; the
// environment (SYNCGUARD_REQUIRE_REDIS, REDIS_ADDR, ...) is inherited. It
// exits 1 when go test fails or reports a failure, so the status of a
// pipeline never hides one.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

func main() {
	fs := flag.NewFlagSet("testprogress", flag.ExitOnError)
	goBin := fs.String("go", "go", "the go command")
	slowest := fs.Int("slowest", 0, "print the N slowest tests at the end")
	jsonOut := fs.String("json", "", "also write go test's JSON events to this file")
	idle := fs.Duration("idle", 30*time.Second, "print a still-running line after this long without one")
	args, err := parseOwn(fs, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		fs.Usage()
		os.Exit(2)
	}
	os.Exit(run(*goBin, args, *slowest, *jsonOut, *idle))
}

// parseOwn sets the flags of fs found at the start of args and returns the
// rest, from the first argument that is not one of them (a go test flag
// such as -race, or a package) on.
func parseOwn(fs *flag.FlagSet, args []string) ([]string, error) {
	for len(args) > 0 {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[0], "-"), "=")
		if !strings.HasPrefix(args[0], "-") || fs.Lookup(name) == nil {
			break
		}
		if !hasValue {
			if len(args) < 2 {
				return nil, fmt.Errorf("flag -%s needs a value", name)
			}
			value, args = args[1], args[1:]
		}
		if err := fs.Set(name, value); err != nil {
			return nil, fmt.Errorf("-%s: %w", name, err)
		}
		args = args[1:]
	}
	return args, nil
}

// run runs go test -json with args and returns the exit status.
func run(goBin string, args []string, slowest int, jsonOut string, idle time.Duration) int {
	cmd := exec.Command(goBin, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		return 1
	}
	var in io.Reader = stdout
	if jsonOut != "" {
		f, err := os.Create(jsonOut)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testprogress:", err)
			return 1
		}
		defer f.Close()
		in = io.TeeReader(stdout, f)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		return 1
	}
	out := &lockedWriter{w: os.Stdout}
	s := newSummary(out, modulePath())
	done := make(chan struct{})
	go s.heartbeat(idle, start, done)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		s.line(sc.Bytes())
	}
	close(done)
	scanErr := sc.Err()
	waitErr := cmd.Wait()
	failed := s.finish(time.Since(start), slowest)
	switch {
	case scanErr != nil:
		fmt.Fprintln(os.Stderr, "testprogress: reading go test's output:", scanErr)
		return 1
	case waitErr != nil:
		var exit *exec.ExitError
		if !errors.As(waitErr, &exit) {
			fmt.Fprintln(os.Stderr, "testprogress:", waitErr)
		} else if !failed {
			fmt.Fprintf(os.Stderr, "testprogress: go test %v\n", waitErr)
		}
		return 1
	case failed:
		return 1
	}
	return 0
}

// modulePath reads the module path from ./go.mod, to print package names
// relative to it; "" when there is none.
func modulePath() string {
	b, err := os.ReadFile("go.mod")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	return ""
}

// lockedWriter serialises the writes of the event loop and the heartbeat.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
