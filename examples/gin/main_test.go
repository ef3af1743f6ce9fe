package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demohttp"
	"github.com/syncguard-go/syncguard/examples/internal/demotest"
)

func TestDemo(t *testing.T) {
	got := demotest.Run(t, 10*time.Second, demo)
	for _, want := range []string{"tally: 201: 1, 409: 9", "c.Errors of the refused: 9", "retry  3: 201 Created", "422 Unprocessable Entity", "OK: "} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// The demo must fail (make demo exits non-zero) when the lock lets
// duplicates through.
func TestDemoFailsWhenLockLeaks(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	if err := demohttp.RunLeaky(ctx, &out, demo); err == nil || !strings.Contains(err.Error(), "burst: tally") {
		t.Errorf("demo on a leaky lock: got error %v, want the burst's tally mismatch; output:\n%s", err, &out)
	}
}
