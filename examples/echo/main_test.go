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
	part1, part2, ok := strings.Cut(got, "== Part 2")
	if !ok {
		t.Fatalf("output lacks part 2; got:\n%s", got)
	}
	for _, want := range []string{
		"tally: 200: 1, 409: 9",
		"200 OK, fence 000000000000001",
		"request  1: 200 OK, fence 000000000000002",
		"request  2: 200 OK, fence 000000000000003",
		"request  3: 200 OK, fence 000000000000004",
		"Handlers ran 4 times, at most 1 at once, under fences 000000000000001, 000000000000002, 000000000000003, 000000000000004",
	} {
		if !strings.Contains(part1, want) {
			t.Errorf("part 1 lacks %q; got:\n%s", want, got)
		}
	}
	if n := strings.Count(part1, "409 Conflict, Retry-After: 1\n"); n != burst-1 {
		t.Errorf("409s with Retry-After: 1 (nothing measured yet: the cap): got %d, want %d; output:\n%s", n, burst-1, got)
	}
	for _, want := range []string{
		"tally: 200: 5 ",
		"Handlers ran 5 times, at most 1 at once, under fences 000000000000001, 000000000000002, 000000000000003, 000000000000004, 000000000000005",
		"OK: ",
	} {
		if !strings.Contains(part2, want) {
			t.Errorf("part 2 lacks %q; got:\n%s", want, got)
		}
	}
	_, part3, _ := strings.Cut(part2, "== Part 3")
	// Striped fence counters: a fence near the server's clock in ms.
	alice := regexp.MustCompile(`request:  201 Created, fence (\d{15}), for alice\n`).FindStringSubmatch(part3)
	bob := regexp.MustCompile(`bob, same key and body: 201 Created, fence (\d{15}), for bob\n`).FindStringSubmatch(part3)
	if alice == nil || bob == nil {
		t.Fatalf("part 3 lacks alice's or bob's run; got:\n%s", got)
	}
	for _, want := range []string{
		"retry  1: 201 Created, fence " + alice[1] + ", for alice, replayed\n",
		"retry  3: 201 Created, fence " + alice[1] + ", for alice, replayed\n",
		"alice, another body:    422 Unprocessable Entity\n",
		"bob, retry:             201 Created, fence " + bob[1] + ", for bob, replayed\n",
		"Handler ran 2 time(s) for 7 requests: for alice, for bob\n",
	} {
		if !strings.Contains(part3, want) {
			t.Errorf("part 3 lacks %q; got:\n%s", want, got)
		}
	}
	part2, _, _ = strings.Cut(part2, "== Part 3")
	if strings.Contains(part2, "409 Conflict") { // not "409": the port may hold those digits
		t.Errorf("part 2 has a 409; output:\n%s", got)
	}
}

// The demo must fail loudly when the replay serves one user another's
// response.
func TestDemoFailsWhenUsersMixedUp(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	err := demohttp.RunMixedUsers(ctx, &out, other, user, demo)
	if err == nil || !strings.Contains(err.Error(), "bob was served alice's response") {
		t.Errorf("demo on mixed-up users: got error %v, want bob served alice's response; output:\n%s", err, &out)
	}
}

// The demo must fail loudly (make demo exits non-zero) when the lock lets
// duplicates through.
func TestDemoFailsWhenLockLeaks(t *testing.T) {
	ctx := demotest.Context(t, 10*time.Second)
	var out bytes.Buffer
	err := demohttp.RunLeaky(ctx, &out, demo)
	if err == nil || !strings.Contains(err.Error(), `burst: tally "200: 10", want "200: 1, 409: 9"`) {
		t.Errorf("demo on a leaky lock: got error %v, want the burst's tally mismatch; output:\n%s", err, &out)
	}
}
