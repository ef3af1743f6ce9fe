package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demohttp"
	"github.com/syncguard-go/syncguard/examples/internal/demorun"
)

func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	var out bytes.Buffer
	if err := demorun.Run(ctx, &out, "", demo); err != nil { // embedded miniredis
		t.Fatalf("run: %v\noutput:\n%s", err, &out)
	}
	got := out.String()
	// Striped fence counters: the fences start near the server's clock in
	// milliseconds, so they are matched by pattern.
	fence := `(\d{15})`
	for _, want := range []string{
		`Fences: 1024 striped counters`,
		`tally: 201: 1, 409: 9`,
		`retry  1: 201 Created, fence ` + fence + `, replayed`,
		`retry  3: 201 Created, fence ` + fence + `, replayed`,
		`request: 422 Unprocessable Entity`,
		`Handlers ran 1 time\(s\), under fence ` + fence + `\n`,
		`OK: `,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	// Every retry replays the one run's fence.
	ran := regexp.MustCompile(`Handlers ran 1 time\(s\), under fence ` + fence).FindStringSubmatch(got)
	for _, m := range regexp.MustCompile(`retry +\d: 201 Created, fence `+fence).FindAllStringSubmatch(got, -1) {
		if ran == nil || m[1] != ran[1] {
			t.Errorf("retry replayed fence %s, want the run's %v", m[1], ran)
		}
	}
	if n := strings.Count(got, "409 Conflict, Retry-After: 10\n"); n != burst-1 {
		t.Errorf("409s with Retry-After: 10: got %d, want %d; output:\n%s", n, burst-1, got)
	}
}

// The demo must fail loudly (make demo exits non-zero) when the lock lets
// duplicates through.
func TestDemoFailsWhenLockLeaks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	var out bytes.Buffer
	err := demohttp.RunLeaky(ctx, &out, demo)
	if err == nil || !strings.Contains(err.Error(), `burst: tally "201: 10", want "201: 1, 409: 9"`) {
		t.Errorf("demo on a leaky lock: got error %v, want the burst's tally mismatch; output:\n%s", err, &out)
	}
}
