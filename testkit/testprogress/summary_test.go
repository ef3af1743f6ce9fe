package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"time"
)

// events is a go test -json stream: a passing package with a skipped test,
// one with a failing subtest and skipped ones, one without test files, and
// one that does not build.
const events = `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestOK"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"    a_test.go:9: noise of a passing test\n"}
{"Action":"pass","Package":"m/a","Test":"TestOK","Elapsed":1.5}
{"Action":"run","Package":"m/a","Test":"TestRedis"}
{"Action":"output","Package":"m/a","Test":"TestRedis","Output":"=== RUN   TestRedis\n"}
{"Action":"output","Package":"m/a","Test":"TestRedis","Output":"    shared.go:46: SKIP: no redis-server on PATH\n"}
{"Action":"output","Package":"m/a","Test":"TestRedis","Output":"--- SKIP: TestRedis (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestRedis","Elapsed":0}
{"Action":"output","Package":"m/a","Output":"ok  \tm/a\t1.6s\n"}
{"Action":"pass","Package":"m/a","Elapsed":1.6}
{"Action":"start","Package":"m/b"}
{"Action":"output","Package":"m/b","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"m/b","Test":"TestBad/sub","Output":"    b_test.go:12: got 1, want 2\n"}
{"Action":"fail","Package":"m/b","Test":"TestBad/sub","Elapsed":0.2}
{"Action":"output","Package":"m/b","Test":"TestBad","Output":"--- FAIL: TestBad (0.30s)\n"}
{"Action":"fail","Package":"m/b","Test":"TestBad","Elapsed":0.3}
{"Action":"output","Package":"m/b","Test":"TestFine","Output":"    b_test.go:30: not shown\n"}
{"Action":"pass","Package":"m/b","Test":"TestFine","Elapsed":2.25}
{"Action":"output","Package":"m/b","Test":"TestSkips","Output":"=== RUN   TestSkips\n"}
{"Action":"output","Package":"m/b","Test":"TestSkips/redis","Output":"=== RUN   TestSkips/redis\n"}
{"Action":"output","Package":"m/b","Test":"TestSkips/redis","Output":"    b_test.go:40: a log line first\n"}
{"Action":"output","Package":"m/b","Test":"TestSkips/redis","Output":"    shared.go:46: SKIP: no redis-server on PATH\n"}
{"Action":"output","Package":"m/b","Test":"TestSkips/redis","Output":"    --- SKIP: TestSkips/redis (0.00s)\n"}
{"Action":"skip","Package":"m/b","Test":"TestSkips/redis","Elapsed":0}
{"Action":"output","Package":"m/b","Test":"TestSkips/short","Output":"=== RUN   TestSkips/short\n"}
{"Action":"output","Package":"m/b","Test":"TestSkips/short","Output":"    b_test.go:50: skipped with -short\n"}
{"Action":"output","Package":"m/b","Test":"TestSkips/short","Output":"    --- SKIP: TestSkips/short (0.00s)\n"}
{"Action":"skip","Package":"m/b","Test":"TestSkips/short","Elapsed":0}
{"Action":"output","Package":"m/b","Test":"TestSkips/now","Output":"=== RUN   TestSkips/now\n"}
{"Action":"output","Package":"m/b","Test":"TestSkips/now","Output":"    --- SKIP: TestSkips/now (0.00s)\n"}
{"Action":"skip","Package":"m/b","Test":"TestSkips/now","Elapsed":0}
{"Action":"output","Package":"m/b","Test":"TestSkips","Output":"--- PASS: TestSkips (0.00s)\n"}
{"Action":"pass","Package":"m/b","Test":"TestSkips","Elapsed":0}
{"Action":"output","Package":"m/b","Output":"FAIL\tm/b\t2.7s\n"}
{"Action":"fail","Package":"m/b","Elapsed":2.7}
{"Action":"output","Package":"m/c","Output":"?   \tm/c\t[no test files]\n"}
{"Action":"skip","Package":"m/c","Elapsed":0}
{"ImportPath":"m/d [m/d.test]","Action":"build-output","Output":"# m/d [m/d.test]\n"}
{"ImportPath":"m/d [m/d.test]","Action":"build-output","Output":"d_test.go:3:2: undefined: x\n"}
{"ImportPath":"m/d [m/d.test]","Action":"build-fail"}
{"Action":"start","Package":"m/d"}
{"Action":"output","Package":"m/d","Output":"FAIL\tm/d [build failed]\n"}
{"Action":"fail","Package":"m/d","Elapsed":0,"FailedBuild":"m/d [m/d.test]"}
not json at all
`

func TestSummary(t *testing.T) {
	var out bytes.Buffer
	s := newSummary(&out, "m")
	for _, l := range strings.Split(strings.TrimSuffix(events, "\n"), "\n") {
		s.line([]byte(l))
	}
	if !s.finish(3*time.Second, 2) {
		t.Error("finish: got no failure, want one")
	}
	got := out.String()
	for _, want := range []string{
		"ok    a                                               1.6s\n",
		"FAIL  b                                               2.7s\n",
		"      b_test.go:12: got 1, want 2\n",
		"      --- FAIL: TestBad (0.30s)\n",
		"-     c  (no test files)\n",
		"FAIL  d                                               0.0s\n      # m/d [m/d.test]\n      d_test.go:3:2: undefined: x\n",
		"not json at all\n",
		"slowest tests:\n     2.2s  b TestFine\n     1.5s  a TestOK\n",
		"skipped tests, by reason:\n" +
			"       2  SKIP: no redis-server on PATH (a TestRedis, ...)\n" +
			"       1  b TestSkips/short: skipped with -short\n" +
			"       1  b TestSkips/now: (no reason given)\n" +
			"FAIL: 1 packages ok, 2 failed, 1 without tests; 3 tests passed, 2 failed, 4 skipped; in 3s\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	for _, absent := range []string{"noise of a passing test", "not shown"} {
		if strings.Contains(got, absent) {
			t.Errorf("output has %q, the output of a passing test; got:\n%s", absent, got)
		}
	}
}

func TestSummaryPass(t *testing.T) {
	var out bytes.Buffer
	s := newSummary(&out, "m")
	for _, l := range strings.Split(strings.TrimSuffix(events, "\n"), "\n") {
		if strings.Contains(l, `"Package":"m/a"`) {
			s.line([]byte(l))
		}
	}
	if s.finish(time.Second, 0) {
		t.Errorf("finish: got a failure, want none; output:\n%s", &out)
	}
	if got, want := out.String(), "skipped tests, by reason:\n"+
		"       1  a TestRedis: SKIP: no redis-server on PATH\n"+
		"PASS: 1 packages ok, 0 failed, 0 without tests; 1 tests passed, 0 failed, 1 skipped; in 1s\n"; !strings.HasSuffix(got, want) {
		t.Errorf("got %q, want it to end in %q", got, want)
	}
}

func TestParseOwn(t *testing.T) {
	tests := []struct {
		desc     string
		args     []string
		wantRest string
		wantJSON string
	}{
		{desc: "none", args: []string{"-race", "./..."}, wantRest: "-race ./..."},
		{desc: "separate value", args: []string{"-json", "f.json", "-count=1", "./..."}, wantRest: "-count=1 ./...", wantJSON: "f.json"},
		{desc: "joined value", args: []string{"--json=f.json", "./lock"}, wantRest: "./lock", wantJSON: "f.json"},
		{desc: "stops at the first other", args: []string{"-race", "-json", "f.json"}, wantRest: "-race -json f.json"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			json := fs.String("json", "", "")
			rest, err := parseOwn(fs, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(rest, " "); got != tt.wantRest || *json != tt.wantJSON {
				t.Errorf("parseOwn(%q): got rest %q, json %q; want %q, %q", tt.args, got, *json, tt.wantRest, tt.wantJSON)
			}
		})
	}
}
