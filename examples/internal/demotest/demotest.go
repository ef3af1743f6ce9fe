// Package demotest is the part the example programs' tests share: a demo
// run on an embedded Redis within a time limit.
package demotest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/syncguard-go/syncguard/examples/internal/demorun"
)

// Context returns a context that ends after d, or when t ends.
func Context(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Run runs demo on an embedded miniredis (demorun.Run without a URL)
// within d and returns its story. It fails t when the demo fails.
func Run(t testing.TB, d time.Duration, demo demorun.Func) string {
	t.Helper()
	var out bytes.Buffer
	if err := demorun.Run(Context(t, d), &out, "", demo); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, &out)
	}
	return out.String()
}
