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
	for _, want := range []string{"7 replayed", "replayed true; payments made for it: 1", "answer: FailedPrecondition",
		"report 4: ResourceExhausted [", "OK: one payment per key"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
}

// The demo must fail loudly (make demo exits non-zero) when the lock lets
// duplicates through.
func TestDemoFailsWhenLockLeaks(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	err := demohttp.RunLeaky(ctx, &out, demo)
	if err == nil || !strings.Contains(err.Error(), "burst:") {
		t.Errorf("demo on a leaky lock: got error %v, want the burst's runs; output:\n%s", err, &out)
	}
}
