package main

import (
	"bytes"
	"context"
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
	for _, want := range []string{"7 replayed", "replayed true; payments made for it: 1", "answer: FailedPrecondition",
		"report 4: ResourceExhausted [", "OK: one payment per key"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q; got:\n%s", want, &out)
		}
	}
}

// The demo must fail loudly (make demo exits non-zero) when the lock lets
// duplicates through.
func TestDemoFailsWhenLockLeaks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	var out bytes.Buffer
	err := demohttp.RunLeaky(ctx, &out, demo)
	if err == nil || !strings.Contains(err.Error(), "burst:") {
		t.Errorf("demo on a leaky lock: got error %v, want the burst's runs; output:\n%s", err, &out)
	}
}
