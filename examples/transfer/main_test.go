package main

import (
	"strings"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demotest"
)

// TestDemo runs the transfers on an embedded Redis: every transfer
// succeeds and the total is kept.
func TestDemo(t *testing.T) {
	out := demotest.Run(t, 20*time.Second, demo)
	if !strings.Contains(out, "OK: 60 transfers") || !strings.Contains(out, "hold 400 in all") {
		t.Errorf("output lacks the OK line; got:\n%s", out)
	}
}
