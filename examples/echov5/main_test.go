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
	for _, want := range []string{
		"tally: 200: 1, 409: 9",
		"retry  3: 201 Created, fence 000000000000001, for alice, replayed\n",
		"alice, another body:    422 Unprocessable Entity\n",
		"bob, retry:             201 Created, fence 000000000000001, for bob, replayed\n",
		"Handler ran for [alice bob]\n",
		"OK: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
}

// The demo must fail loudly when the lock lets duplicates through, or
// when one user is served another's response.
func TestDemoFailsWhenBroken(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	if err := demohttp.RunLeaky(ctx, &out, demo); err == nil || !strings.Contains(err.Error(), `tally "200: 10", want "200: 1, 409: 9"`) {
		t.Errorf("leaky lock: error %v, want the burst's tally mismatch", err)
	}
	if err := demohttp.RunMixedUsers(ctx, &out, other, user, demo); err == nil || !strings.Contains(err.Error(), "bob was served alice's response") {
		t.Errorf("mixed-up users: error %v, want bob served alice's response", err)
	}
}
