package main

import (
	"bytes"
	"regexp"
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
		"alice, another body:    422 Unprocessable Entity\n",
		"Handler ran for [alice bob]\n",
		"OK: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q; got:\n%s", want, got)
		}
	}
	// Striped fence counters: a fence near the server's clock in ms, the
	// same for a user's run and its replays.
	for _, user := range []string{"alice", "bob"} {
		run := regexp.MustCompile(`201 Created, fence (\d{15}), for ` + user + `\n`).FindStringSubmatch(got)
		if run == nil || !strings.Contains(got, "201 Created, fence "+run[1]+", for "+user+", replayed\n") {
			t.Errorf("output lacks %s's run and its replay under the same fence; got:\n%s", user, got)
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
