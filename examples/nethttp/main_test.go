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
	// milliseconds, so they are matched by pattern; the demo itself fails
	// unless each is above the one before.
	fence := `(\d{15})`
	for _, want := range []string{
		`Fences: 1024 striped counters`,
		`tally: 200: 1, 409: 9`,
		`request  1: 200 OK, fence ` + fence,
		`request  3: 200 OK, fence ` + fence,
		`Handlers ran 4 times, under fences ` + fence + `, ` + fence + `, ` + fence + `, ` + fence + `\n`,
		`OK: `,
	} {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	m := regexp.MustCompile(`Handlers ran 4 times, under fences ` + fence + `, ` + fence + `, ` + fence + `, ` + fence).FindStringSubmatch(got)
	for i := 2; m != nil && i < len(m); i++ {
		if m[i] <= m[i-1] {
			t.Errorf("fence %s follows %s; want strictly increasing fences", m[i], m[i-1])
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
	if err == nil || !strings.Contains(err.Error(), `burst: tally "200: 10", want "200: 1, 409: 9"`) {
		t.Errorf("demo on a leaky lock: got error %v, want the burst's tally mismatch; output:\n%s", err, &out)
	}
}
